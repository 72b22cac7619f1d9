#include "posgeom/pass/window_source.h"

#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/pass/analysis_run.h"
#include "posgeom/pass/token_hash.h"
#include "input_error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// tiny-gpt2 on two small documents (the bundled model's tokenizer), windows of 8 tokens in batches of 3.
pass::AnalyzeOptions optionsOver(const ScratchDir& s) {
  fs::create_directories(s / "corpus");
  writeFile(s / "corpus" / "a.txt", "The quick brown fox jumps over the lazy dog, and then it jumps again and again.\n");
  writeFile(s / "corpus" / "b.txt", "Position and context: a hidden state is the sum of a mean over positions and the rest.\n");
  pass::AnalyzeOptions o;
  o.model = (sharedDir() / "fixtures/models/tiny-gpt2").string();
  o.corpus.path = (s / "corpus").string();
  o.tokenizer = fs::path(POSGEOM_SOURCE_DIR) / "models/default";  // the fixtures carry no tokenizer: the bundled model's characters
  o.seq_len = 8;
  o.batch_size = 3;
  o.report.screenot_k = 2;
  return o;
}

// The windows are the ones analyze reads, batch by batch: the same count and the same
// token hash as the state of a real run with the same options, and the same settings.
TEST(WindowSource, CutsTheWindowsAnalyzeReadsAndRecordsItsSettings) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto o = optionsOver(s);
  pass::WindowSource source(o);
  pass::TokenHash hash;
  int64_t windows = 0;
  std::vector<int64_t> sizes;
  for (auto batch = source.next(); batch.size() > 0; batch = source.next()) {
    ASSERT_EQ(batch.ids.size(), static_cast<std::size_t>(batch.size() * 8));
    EXPECT_EQ(batch.indices.front(), windows);
    hash.add(batch.ids);
    windows += batch.size();
    sizes.push_back(batch.size());
    EXPECT_FALSE(batch.labels.front().empty());
  }
  ASSERT_GE(windows, 4);
  EXPECT_EQ(sizes.front(), 3);

  pass::RunControl control;
  control.out = s / "out";
  control.state_file = s / "state.safetensors";
  const auto run = pass::runAnalysis(o, control, nullptr);
  EXPECT_EQ(run.state.windows, windows);
  EXPECT_EQ(run.state.settings["data"].value("token_hash", ""), hash.hex());
  EXPECT_EQ(anova::settingsDifference(source.settings(), run.state.settings, "source", "analyze"), "");
  EXPECT_EQ(source.settings()["model_fingerprint"], run.state.settings["model_fingerprint"]);
}

// Bad input is analyze's error, before a model is read: the corpus first.
TEST(WindowSource, RefusesWhatAnalyzeRefuses) {
  ScratchDir s;
  pass::AnalyzeOptions o;
  o.model = (s / "no-model").string();
  EXPECT_INPUT_ERROR(pass::WindowSource{o}, std::string(option::kCorpus) + ": is needed");
  o.corpus.path = (s / "no-corpus").string();
  EXPECT_INPUT_ERROR(pass::WindowSource{o}, (s / "no-corpus").string());
  writeFile(s / "c.txt", "text\n");
  o.corpus.path = (s / "c.txt").string();
  o.batch_size = -3;
  EXPECT_INPUT_ERROR(pass::WindowSource{o}, "--batch-size");
}

}  // namespace
}  // namespace posgeom::testing
