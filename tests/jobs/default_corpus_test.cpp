#include "posgeom/jobs/default_corpus.h"

#include <algorithm>

#include "captured_log.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(DefaultCorpus, TheSystemsLicenceTextsWhereTheyAreSilently) {
  ScratchDir s;
  fs::create_directories(s / "licenses");
  fs::create_directories(s / "bundled");
  const CapturedLog log;
  EXPECT_EQ(jobs::defaultCorpus(s / "licenses", s / "bundled"), s / "licenses");
  EXPECT_EQ(log.str(), "");
}

TEST(DefaultCorpus, TheBundledCopyWhereTheSystemHasNoneWithOneLineSayingSo) {
  ScratchDir s;
  fs::create_directories(s / "bundled");
  const CapturedLog log;
  EXPECT_EQ(jobs::defaultCorpus(s / "licenses", s / "bundled"), s / "bundled");
  const auto said = log.str();
  EXPECT_NE(said.find((s / "licenses").string() + " is missing (not a Debian system?): using the corpus bundled with posgeom, " +
                           (s / "bundled").string() + "\n"),
            std::string::npos)
      << said;
  EXPECT_EQ(std::count(said.begin(), said.end(), '\n'), 1) << said;
}

// Neither there: the usual directory, which the corpus reader then names.
TEST(DefaultCorpus, TheSystemsPathWhenNeitherExists) {
  ScratchDir s;
  const CapturedLog log;
  EXPECT_EQ(jobs::defaultCorpus(s / "licenses", s / "bundled"), s / "licenses");
  EXPECT_EQ(log.str(), "");
}

// Small plain-text documents in the source tree, the default's kind of text.
TEST(DefaultCorpus, TheBundledCorpusIsSmallPlainText) {
  const auto dir = jobs::bundledCorpusDir();
  EXPECT_EQ(dir, fs::path(POSGEOM_SOURCE_DIR) / "corpora/default");
  std::uintmax_t bytes = 0;
  int documents = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto text = readFile(e.path());
    EXPECT_FALSE(text.empty()) << e.path();
    EXPECT_EQ(text.find('\0'), std::string::npos) << e.path();
    bytes += text.size();
    ++documents;
  }
  EXPECT_GE(documents, 5);
  EXPECT_LT(bytes, 200u * 1024);
}

}  // namespace
}  // namespace posgeom::testing
