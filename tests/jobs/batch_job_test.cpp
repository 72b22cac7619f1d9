#include "posgeom/jobs/batch_job.h"

#include <algorithm>
#include <map>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/io/path_lock.h"
#include "posgeom/model/random_checkpoint.h"
#include "report_fixtures.h"
#include "captured_log.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

std::string option(const jobs::SweepRun& run, const std::string& key) {
  for (const auto& [k, v] : run.options)
    if (k == key) return v;
  return "<absent>";
}

// What the CLI's parser would make of a run's options (the few these tests give).
pass::AnalyzeOptions parsedOptions(const jobs::SweepRun& run) {
  pass::AnalyzeOptions job;
  for (const auto& [k, v] : run.options) {
    if (k == "model") job.model = v;
    if (k == "corpus") job.corpus.path = v;
    if (k == "seq-len") job.seq_len = std::stoll(v);
    if (k == "num-seqs") job.num_seqs = std::stoll(v);
    if (k == "screenot-k") job.report.screenot_k = std::stoi(v);
  }
  return job;
}

// A small random GPT-2 checkpoint of `layers` blocks, 32 wide.
void writeTinyCheckpoint(const fs::path& dir, uint64_t seed, int64_t layers = 2) {
  model::RandomCheckpointSpec spec;
  spec.layers = layers;
  spec.hidden_size = 32;
  spec.heads = 2;
  spec.vocab_size = 50;
  spec.max_positions = 64;
  spec.seed = seed;
  model::writeRandomCheckpoint(spec, dir);
}

// Acceptance: a sweep of the fixture models over the shared topic corpora runs; a missing
// model and a missing corpus are reported and skipped while the others still run.
TEST(BatchJob, FixtureSweepRunsAndSkipsWhatIsMissing) {
  POSGEOM_REQUIRE_SHARED("data/corpora/topics/wikitext-topic0.txt");
  ScratchDir s;
  const auto tok = writeByteTokenizer(s / "tok");
  const auto models = sharedDir() / "fixtures/models", topics = sharedDir() / "data/corpora/topics";
  fs::create_directories(s / "ref");
  for (const char* m : {"gpt2", "bloom", "gone"})  // every model and corpus has one; these check nothing
    for (const char* c : {"wiki", "code", "lost"}) writeFile(s / "ref" / (std::string(m) + "-" + c + ".json"), "{}");
  writeFile(s / "ref/gpt2-wiki.json", R"({"layers": [{"layer": 0, "stable_rank": 1e6}]})");  // surely moved
  writeFile(s / "sweep.toml", "out = \"" + (s / "out").string() + "\"\nreference = \"./ref\"\n[analyze]\ntokenizer = \"" +
                                  tok.string() + "\"\nseq-len = 32\nwindows-per-document = 3\nscreenot-k = 3\n"
                                  "[models.gpt2]\nmodel = \"" + (models / "tiny-gpt2").string() + "\"\ntable-layers = [0, 3]\n"
                                  "[models.bloom]\nmodel = \"" + (models / "tiny-bloom").string() + "\"\nheads = true\n"
                                  "table-columns = [\"stable_rank\", \"head_classes\"]\n"
                                  "[models.gone]\nmodel = \"./no-such-model\"\n"
                                  "[corpora.wiki]\ncorpus = \"" + (topics / "wikitext-*.txt").string() + "\"\n"
                                  "[corpora.code]\ncorpus = \"" + (topics / "github-*.txt").string() + "\"\n"
                                  "[corpora.lost]\ncorpus = \"./lost-*.txt\"\n");
  const auto sweep = jobs::readSweep(s / "sweep.toml");
  ASSERT_EQ(sweep.runs.size(), 9u);
  const auto outcomes = jobs::runSweep(sweep, [&](const jobs::SweepRun& run) {
    pass::AnalyzeOptions job;  // what the CLI's parser would make of these options
    for (const auto& [k, v] : run.options) {
      if (k == "model") job.model = v;
      if (k == "corpus") job.corpus.path = v;
      if (k == "tokenizer") job.tokenizer = v;
      if (k == "seq-len") job.seq_len = std::stoll(v);
      if (k == "windows-per-document") job.windows_per_document = std::stoll(v);
      if (k == "screenot-k") job.report.screenot_k = std::stoi(v);
      if (k == "heads") job.heads = true;
    }
    return job;
  });
  std::map<std::string, jobs::RunOutcome> by_name;
  for (std::size_t i = 0; i < outcomes.size(); ++i) by_name[sweep.runs[i].name] = outcomes[i];
  for (const char* ran : {"gpt2-wiki", "gpt2-code", "bloom-wiki", "bloom-code"}) {
    EXPECT_EQ(jobs::runStatusName(by_name[ran].status), "ok") << ran << ": " << by_name[ran].message;
    EXPECT_TRUE(fs::exists(s / "out" / ran / "report.html")) << ran;
  }
  EXPECT_EQ(by_name["gpt2-wiki"].check_passed, false);
  EXPECT_TRUE(fs::exists(s / "out/gpt2-wiki/check.txt"));
  EXPECT_EQ(by_name["gpt2-code"].check_passed, true);  // its reference checks nothing
  EXPECT_EQ(jobs::runStatusName(by_name["gpt2-lost"].status), "skipped");
  EXPECT_NE(by_name["gpt2-lost"].message.find("lost-*.txt: matches no files"), std::string::npos) << by_name["gpt2-lost"].message;
  EXPECT_EQ(jobs::runStatusName(by_name["gone-wiki"].status), "skipped");
  EXPECT_NE(by_name["gone-wiki"].message.find("no-such-model"), std::string::npos);

  const auto table = readFile(s / "out/table.md");
  EXPECT_NE(table.find("| gpt2 | wiki |"), std::string::npos) << table;
  EXPECT_NE(table.find("B "), std::string::npos);  // topic files carry labels: context similarity
  EXPECT_NE(table.find("gone-wiki skipped"), std::string::npos);
  const auto csv = readFile(s / "out/table.csv");
  std::size_t gpt2_ranks = 0;
  for (std::size_t at = 0; (at = csv.find("gpt2,,wiki,screenot_rank,", at)) != std::string::npos; ++at) ++gpt2_ranks;
  EXPECT_EQ(gpt2_ranks, 2u);  // the table's layers 0 and 3 only
  // head_classes: each block's heads by class, from the run's own summary.
  const auto bloom = io::readJsonFile(s / "out/bloom-wiki/summary.json");
  std::map<std::string, int64_t> block0;
  for (const auto& h : bloom["heads"])
    if (h["block"] == 0) block0[h["class"].get<std::string>()] += 1;
  EXPECT_NE(csv.find("bloom,,wiki,heads_local,0," + std::to_string(block0["local"]) + "\n"), std::string::npos) << csv;
  EXPECT_NE(csv.find("bloom,,wiki,heads_uniform,0," + std::to_string(block0["uniform"]) + "\n"), std::string::npos);
  EXPECT_NE(table.find("B0 l" + std::to_string(block0["local"]) + " s" + std::to_string(block0["slow-decay"]) + " u" +
                       std::to_string(block0["uniform"])),
            std::string::npos)
      << table;
  const auto status = io::readJsonFile(s / "out/sweep.json");
  EXPECT_EQ(status["runs"].size(), 9u);
  // Every column a table-columns list may name is one a run's summary has (topic corpora: with labels).
  const auto gpt2 = io::readJsonFile(s / "out/gpt2-wiki/summary.json");
  for (const auto& column : jobs::tableColumnNames())
    if (column != "context_similarity" && column != "head_classes") {
      EXPECT_TRUE(gpt2["layers"][0].contains(column)) << column;
    }
  EXPECT_TRUE(gpt2.contains("context_similarity"));
}

// A checkpoint series (train --save-every): a pattern's matches run in step order (2, 10,
// 100: numbers, not text), each into its own report; table.csv is keyed by step and the
// series page draws every step.
TEST(BatchJob, CheckpointSeriesRunsInStepOrderIntoATableByStep) {
  ScratchDir s;
  for (int step : {10, 2, 100}) writeTinyCheckpoint(s / "series" / ("step_" + std::to_string(step)), static_cast<uint64_t>(step));
  fs::create_directories(s / "series/notes");  // not a checkpoint: the pattern leaves it out
  writeFile(s / "series/step_2/training.json", R"({"steps": 2, "final_validation_loss": 3.25})");
  writeFile(s / "series/step_10/training.json", "{not json");  // the page goes without its loss
  const std::string common = "out = \"" + (s / "out").string() + "\"\n[analyze]\nnum-seqs = 6\nseq-len = 16\nscreenot-k = 3\nheads = true\n"
                             "[corpora.noise]\ncorpus = \"random\"\n";
  writeFile(s / "sweep.toml", common + "[models.tiny]\nmodel = \"./series/step_*\"\n"
                              "table-columns = [\"screenot_rank\", \"head_classes\"]\n");
  const auto sweep = jobs::readSweep(s / "sweep.toml");
  ASSERT_EQ(sweep.runs.size(), 3u);
  std::vector<int64_t> steps;
  for (const auto& run : sweep.runs) steps.push_back(run.step.value_or(-1));
  EXPECT_EQ(steps, (std::vector<int64_t>{2, 10, 100}));
  EXPECT_EQ(sweep.runs[1].name, "tiny-step_10-noise");
  EXPECT_EQ(fs::path(option(sweep.runs[1], "model")), s / "series/step_10");

  const auto outcomes = jobs::runSweep(sweep, [&](const jobs::SweepRun& run) {
    pass::AnalyzeOptions job;
    job.model = option(run, "model");
    job.corpus.path = "random";
    job.num_seqs = 6;
    job.seq_len = 16;
    job.report.screenot_k = 3;
    job.heads = true;
    return job;
  });
  for (const auto& o : outcomes) ASSERT_EQ(jobs::runStatusName(o.status), "ok") << o.message;
  const auto csv = readFile(s / "out/table.csv");
  EXPECT_EQ(csv.substr(0, csv.find('\n')), "model,step,corpus,metric,layer,value");
  for (int step : {2, 10, 100}) {
    const auto summary = io::readJsonFile(s / "out" / ("tiny-step_" + std::to_string(step) + "-noise") / "summary.json");
    const std::string line = "tiny," + std::to_string(step) + ",noise,screenot_rank,1," + summary["layers"][1]["screenot_rank"].dump() + "\n";
    EXPECT_NE(csv.find(line), std::string::npos) << line << csv;
  }
  const auto table = readFile(s / "out/table.md");
  EXPECT_NE(table.find("| tiny | step_10 | noise |"), std::string::npos) << table;
  const auto page = readFile(s / "out/series-tiny-noise.html");
  for (const char* figure : {"fig-series-screenot_rank", "fig-series-lowfreq_energy", "fig-series-etc", "fig-series-classes"})
    EXPECT_NE(page.find(figure), std::string::npos) << figure;
  EXPECT_NE(page.find("<td>2</td><td>3.25</td>"), std::string::npos);  // step 2's validation loss, from its training.json
  EXPECT_NE(page.find("<td>10</td><td></td>"), std::string::npos);
  EXPECT_EQ(io::readJsonFile(s / "out/sweep.json")["series"], nlohmann::json::array({"series-tiny-noise.html"}));

  // A list keeps its order; a pattern that matches nothing is one run, skipped by analyze.
  writeFile(s / "list.toml", common + "[models.tiny]\nmodel = [\"./series/step_100\", \"./series/step_2\"]\n"
                             "[models.none]\nmodel = \"./series/epoch_*\"\n");
  const auto listed = jobs::readSweep(s / "list.toml");
  ASSERT_EQ(listed.runs.size(), 3u);
  EXPECT_EQ(listed.runs[0].step, 100);
  EXPECT_EQ(listed.runs[1].step, 2);
  EXPECT_EQ(listed.runs[2].name, "none-noise");
  EXPECT_FALSE(listed.runs[2].step.has_value());
}

// Probe 3, case 203: a series of checkpoints of different architectures ran silently as one.
TEST(BatchJob, ASeriesOfMixedArchitecturesIsSaidToBeOne) {
  ScratchDir s;
  writeTinyCheckpoint(s / "series/step_1", 1);
  writeTinyCheckpoint(s / "series/step_2", 0, 3);  // one layer more
  writeFile(s / "sweep.toml", "out = \"" + (s / "out").string() + "\"\n[analyze]\nnum-seqs = 2\nscreenot-k = 2\nseq-len = 8\n"
                              "[corpora.c]\ncorpus = \"random\"\n[models.s]\nmodel = \"./series/step_*\"\n");
  jobs::BatchJob job;
  job.config = s / "sweep.toml";
  const CapturedLog log;
  const auto summary = jobs::runBatchJob(job, parsedOptions);
  EXPECT_TRUE(summary.allPassed());
  EXPECT_NE(log.str().find("sweep.toml: [models.s] model: step_2 is a gpt2 of 3 layers 32 wide, step_1 a gpt2 of 2 layers 32 wide: "
                           "the series page draws them as one model"),
            std::string::npos)
      << log.str();
}

// Probe 3, case 204: two sweeps on one out leapfrogged, each tabling the other's runs as skipped.
TEST(BatchJob, ASweepHoldsItsOutForItsWholeRun) {
  ScratchDir s;
  writeFile(s / "sweep.toml", "out = \"" + (s / "out").string() + "\"\n[models.m]\nmodel = \"./m\"\n[corpora.c]\ncorpus = \"random\"\n");
  const auto sweep = jobs::readSweep(s / "sweep.toml");
  io::PathLock other(s / "out");
  try {
    jobs::runSweep(sweep, parsedOptions);
    ADD_FAILURE() << "a second sweep ran on a held out";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("out: is being written by another posgeom run (pid "), std::string::npos) << e.what();
  }
  EXPECT_FALSE(fs::exists(s / "out"));
  other.release();
  EXPECT_EQ(jobs::runStatusName(jobs::runSweep(sweep, parsedOptions).front().status), "skipped");  // ./m is not there; the sweep ran
  EXPECT_FALSE(fs::exists(s / ".out.posgeom-lock"));
}

// Probe 3, case 214 and top-ten item 3: a sweep run again "kept" a report made with another
// seq-len or another model, and tabled it as this run's. A report is kept only when its
// summary records this run: the same options, and the same model and corpus files.
TEST(BatchJob, AReportIsKeptOnlyWhenItIsThisRunsReport) {
  ScratchDir s;
  writeTinyCheckpoint(s / "model", 1);
  const auto sweepOf = [&](const std::string& seq_len) {
    writeFile(s / "sweep.toml", "out = \"" + (s / "out").string() + "\"\n[analyze]\nnum-seqs = 4\nscreenot-k = 2\nseq-len = " + seq_len +
                                    "\n[models.m]\nmodel = \"./model\"\n[corpora.c]\ncorpus = \"random\"\n");
    return jobs::readSweep(s / "sweep.toml");
  };
  const fs::path summary = s / "out/m-c/summary.json";
  auto status = [&](const jobs::Sweep& sweep) {
    const auto outcome = jobs::runSweep(sweep, parsedOptions).front();
    EXPECT_TRUE(outcome.ran()) << outcome.message;
    return jobs::runStatusName(outcome.status);
  };
  EXPECT_EQ(status(sweepOf("16")), "ok");
  EXPECT_EQ(io::readJsonFile(summary)["sweep"]["options"]["seq-len"], "16");
  EXPECT_EQ(status(sweepOf("16")), "kept");
  EXPECT_EQ(status(sweepOf("8")), "ok");  // another seq-len: run again
  EXPECT_EQ(io::readJsonFile(summary)["seq_len"], 8);
  EXPECT_EQ(status(sweepOf("8")), "kept");
  writeTinyCheckpoint(s / "model", 2);  // other weights at the same path
  const auto fingerprint = io::readJsonFile(summary)["model_fingerprint"];
  EXPECT_EQ(status(sweepOf("8")), "ok");
  EXPECT_NE(io::readJsonFile(summary)["model_fingerprint"], fingerprint);
  // A report that records no sweep run (analyze's own, an older posgeom's) is run again.
  auto bare = io::readJsonFile(summary);
  bare.erase("sweep");
  writeFile(summary, bare.dump());
  EXPECT_EQ(status(sweepOf("8")), "ok");
  EXPECT_EQ(status(sweepOf("8")), "kept");
}

// Probe 3, case 206: table-layers beyond the model's hidden states were dropped silently.
TEST(BatchJob, TableLayersBeyondTheModelAreRefusedBeforeAnyRun) {
  ScratchDir s;
  writeTinyCheckpoint(s / "model", 1);  // 2 layers: hidden states 0 to 2
  const std::string head = "out = \"" + (s / "out").string() + "\"\n[analyze]\nnum-seqs = 4\nscreenot-k = 2\nseq-len = 16\n"
                           "[corpora.c]\ncorpus = \"random\"\n[models.m]\nmodel = \"./model\"\n";
  writeFile(s / "sweep.toml", head + "table-layers = [0, 3]\n");
  jobs::BatchJob job;
  job.config = s / "sweep.toml";
  try {
    jobs::runBatchJob(job, parsedOptions);
    ADD_FAILURE() << "ran";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (s / "sweep.toml").string() + ": [models.m].table-layers: 3 is not a layer of run m-c "
                                                                    "(its model's hidden states are 0 to 2)");
  }
  EXPECT_FALSE(fs::exists(s / "out"));
  writeFile(s / "sweep.toml", head + "table-layers = [0, 2]\n");
  EXPECT_TRUE(jobs::runBatchJob(job, parsedOptions).allPassed());
}

}  // namespace
}  // namespace posgeom::testing
