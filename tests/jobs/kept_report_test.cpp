#include "posgeom/jobs/kept_report.h"

#include "posgeom/io/fingerprint.h"
#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// A run as readSweep makes it: model m x corpus c, with a value and a flag.
jobs::SweepRun sweepRun() {
  jobs::SweepRun run;
  run.name = "m-c";
  run.model = "m";
  run.corpus = "c";
  run.options = {{"seq-len", "16"}, {"heads", ""}};
  return run;
}

// A run that reads --activations: its report is this run's by the record alone.
pass::AnalyzeOptions activationsJob() {
  pass::AnalyzeOptions job;
  job.activations = "hidden.safetensors";
  return job;
}

TEST(KeptReport, AReportIsThisRunsWhenItRecordsThisRun) {
  ScratchDir s;
  const fs::path summary = s / "summary.json";
  writeFile(summary, R"({"seq_len": 16})");
  const auto run = sweepRun();
  EXPECT_EQ(jobs::staleReason(run, activationsJob(), summary),
            "its summary.json records no sweep run (analyze's own, or an older posgeom's)");
  jobs::recordSweepRun(run, summary);
  const auto recorded = io::readJsonFile(summary);
  EXPECT_EQ(recorded["seq_len"], 16);  // the report's own keys stay
  EXPECT_EQ(recorded["sweep"], nlohmann::json::parse(R"({"model": "m", "corpus": "c", "variant": "", "checkpoint": "",
                                                          "options": {"seq-len": "16", "heads": ""}})"));
  EXPECT_EQ(jobs::staleReason(run, activationsJob(), summary), "");
  auto other = run;
  other.corpus = "d";
  EXPECT_EQ(jobs::staleReason(other, activationsJob(), summary), "it is the report of corpus \"c\", not \"d\"");
  other = run;
  other.checkpoint = "step_2";
  EXPECT_EQ(jobs::staleReason(other, activationsJob(), summary), "it is the report of checkpoint \"\", not \"step_2\"");
  other = run;
  other.options = {{"seq-len", "8"}};
  EXPECT_EQ(jobs::staleReason(other, activationsJob(), summary),
            "it was made with other options: heads (then set, now not set), seq-len (then \"16\", now \"8\")");
}

TEST(KeptReport, AReportThatCannotBeReadIsNotThisRuns) {
  ScratchDir s;
  const fs::path summary = s / "summary.json";
  writeFile(summary, "{not json");
  const auto unreadable = jobs::staleReason(sweepRun(), activationsJob(), summary);
  EXPECT_EQ(unreadable.rfind("it cannot be checked: " + summary.string() + ": invalid JSON", 0), 0u) << unreadable;
  writeFile(summary, R"({"sweep": 3})");
  const auto malformed = jobs::staleReason(sweepRun(), activationsJob(), summary);
  EXPECT_EQ(malformed.rfind("its summary.json is not a report's: ", 0), 0u) << malformed;
}

// The same path is not the same model: its files, by content, are.
TEST(KeptReport, AReportIsNotThisRunsWhenItsModelOrCorpusFilesChanged) {
  ScratchDir s;
  fs::create_directories(s / "model");
  writeFile(s / "model/config.json", R"({"model_type": "gpt2"})");
  writeFile(s / "model/model.safetensors", "weights");
  writeFile(s / "corpus.txt", "one two three\n");
  pass::AnalyzeOptions job;
  job.model = (s / "model").string();
  job.corpus.path = (s / "corpus.txt").string();
  const fs::path summary = s / "summary.json";
  writeFile(summary, nlohmann::json{{"model_fingerprint", io::modelFingerprint(s / "model")},
                                    {"model_commit", ""},
                                    {"corpus_fingerprint", io::fingerprintFiles({s / "corpus.txt"})}}
                         .dump());
  const auto run = sweepRun();
  jobs::recordSweepRun(run, summary);
  EXPECT_EQ(jobs::staleReason(run, job, summary), "");
  writeFile(s / "corpus.txt", "one two four\n");
  EXPECT_EQ(jobs::staleReason(run, job, summary), "the corpus's files are not the ones it was made from");
  writeFile(s / "model/model.safetensors", "other weights");
  EXPECT_EQ(jobs::staleReason(run, job, summary), "the model's files (its config or weights) are not the ones it was made from");
  job.activations = "hidden.safetensors";  // read instead of the model and corpus: their files do not matter
  EXPECT_EQ(jobs::staleReason(run, job, summary), "");
}

}  // namespace
}  // namespace posgeom::testing
