#include <nlohmann/json.hpp>

#include <cstdlib>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TokenizeCommand, StandardInputToJsonOnStandardOutput) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  const auto r = runPosgeom({"tokenize", "--tokenizer", (sharedDir() / "data/tokenizers/gpt2").string(), "--input", "-"},
                            "Hello world");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json({15496, 995}));
}

TEST(TokenizeCommand, ModelDirectoryWithoutTokenizerFilesSaysWhatItLookedFor) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  const auto r = runPosgeom({"tokenize", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--input", "-"}, "x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no tokenizer found"), std::string::npos) << r.err;
}

TEST(TokenizeCommand, NeedsModelOrTokenizer) {
  EXPECT_EQ(runPosgeom({"tokenize", "--input", "-"}).exit_code, 2);
}

std::vector<std::string> tokenizeArgs(const std::filesystem::path& input, const std::filesystem::path& out) {
  return {"tokenize", "--tokenizer", (sharedDir() / "data/tokenizers/gpt2").string(), "--input", input.string(), "--out",
          out.string()};
}

// Probe 3 section 10: tokenize --out replaced any existing file.
TEST(TokenizeCommand, AnExistingOutIsReplacedOnlyWithForce) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "a.txt", "Hello world");
  writeFile(s / "ids.json", "precious");
  auto args = tokenizeArgs(s / "a.txt", s / "ids.json");
  const auto r = runPosgeom(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("ids.json: exists; pass --force to replace it"), std::string::npos) << r.err;
  EXPECT_EQ(readFile(s / "ids.json"), "precious");
  args.push_back("--force");
  ASSERT_EQ(runPosgeom(args).exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(readFile(s / "ids.json")), nlohmann::json({15496, 995}));
}

// --out the corpus it reads, even with --force, would replace the text with its ids.
TEST(TokenizeCommand, OutIsNeverTheInput) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "a.txt", "Hello world");
  auto args = tokenizeArgs(s / "a.txt", s / "a.txt");
  args.push_back("--force");
  const auto r = runPosgeom(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("a.txt: is one of the files this run reads"), std::string::npos) << r.err;
  EXPECT_EQ(readFile(s / "a.txt"), "Hello world");
}

// Probe 3 case 284: `--out DIR/` said "cannot write: Success".
TEST(TokenizeCommand, OutNamingADirectorySaysSo) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "a.txt", "Hello world");
  const auto r = runPosgeom(tokenizeArgs(s / "a.txt", s.path().string() + "/"));
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("/: names a directory, but --out is a file"), std::string::npos) << r.err;
}

// A .bin's sidecar is <stem>.json: --out x.json would be both, the sidecar overwriting the ids.
TEST(TokenizeCommand, BinOutThatIsItsOwnSidecarIsRefused) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "a.txt", "Hello world");
  auto args = tokenizeArgs(s / "a.txt", s / "t.json");
  args.insert(args.end(), {"--format", "bin"});
  const auto r = runPosgeom(args);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("t.json: is also the name of its sidecar (t.json)"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(s / "t.json"));
}

// Probe 3 case 124: only analyze had --revision; here the revision's snapshot lacks a tokenizer.
TEST(TokenizeCommand, RevisionPicksTheHubSnapshot) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  const std::string main_commit(40, 'a'), other(40, 'b');
  const auto hub = s / "hub/models--org--m";
  std::filesystem::create_directories(hub / ("snapshots/" + other));  // no tokenizer there
  std::filesystem::copy(sharedDir() / "data/tokenizers/gpt2", hub / ("snapshots/" + main_commit), std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(hub / "refs");
  writeFile(hub / "refs/main", main_commit);
  setenv("HF_HUB_CACHE", (s / "hub").c_str(), 1);
  const auto at_main = runPosgeom({"tokenize", "--model", "org/m", "--input", "-"}, "Hello world");
  const auto at_other = runPosgeom({"tokenize", "--model", "org/m", "--revision", other, "--input", "-"}, "Hello world");
  unsetenv("HF_HUB_CACHE");
  ASSERT_EQ(at_main.exit_code, 0) << at_main.err;
  EXPECT_EQ(at_other.exit_code, 2);
  EXPECT_NE(at_other.err.find("snapshots/" + other + ": no tokenizer found"), std::string::npos) << at_other.err;
}

}  // namespace
}  // namespace posgeom::testing
