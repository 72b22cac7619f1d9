#include "posgeom/jobs/batch_job.h"

#include <algorithm>
#include <map>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/model/random_checkpoint.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

const fs::path kPaperConfig = fs::path(POSGEOM_SOURCE_DIR) / "configs/paper-table1.toml";

std::string option(const jobs::SweepRun& run, const std::string& key) {
  for (const auto& [k, v] : run.options)
    if (k == key) return v;
  return "<absent>";
}

TEST(BatchJob, PaperSweepExpandsModelsCorporaAndVariants) {
  const auto sweep = jobs::readSweep(kPaperConfig);
  ASSERT_EQ(sweep.runs.size(), 4u * 3u * 2u);
  const auto& first = sweep.runs.front();
  EXPECT_EQ(first.name, "GPT2-OpenWebText-positional");
  EXPECT_EQ(option(first, "seq-len"), "512");
  EXPECT_EQ(option(first, "cross-documents"), "");  // a flag
  EXPECT_EQ(option(first, "screenot-k"), "20");
  EXPECT_EQ(first.table_columns, (std::vector<std::string>{"screenot_rank", "stable_rank", "relative_norm"}));
  const auto bert = std::find_if(sweep.runs.begin(), sweep.runs.end(), [](const auto& r) { return r.name == "BERT-GitHub-context"; });
  ASSERT_NE(bert, sweep.runs.end());
  EXPECT_EQ(option(*bert, "causal"), "");
  EXPECT_EQ(option(*bert, "seq-len"), "128");  // the variant wins over [analyze]
  EXPECT_EQ(bert->table_columns, std::vector<std::string>{"context_similarity"});
  const auto llama = std::find_if(sweep.runs.begin(), sweep.runs.end(), [](const auto& r) { return r.model == "Llama2"; });
  EXPECT_EQ(llama->table_layers.size(), 13u);
  EXPECT_EQ(llama->table_layers.back(), 32);
  for (const auto& run : sweep.runs) {
    EXPECT_TRUE(fs::exists(run.reference)) << run.name;  // every model and corpus has the paper's numbers
    EXPECT_EQ(fs::path(option(run, "corpus")).parent_path().filename(), "topics") << run.name;  // ../ resolved from configs/
  }
}

// The reference files hold exactly the paper's numbers, at the mapped layers.
// The randomisation experiment's sweep: the three trained levels on one corpus, with heads.
TEST(BatchJob, RandomisationSweepNamesTheThreeLevels) {
  const auto sweep = jobs::readSweep(fs::path(POSGEOM_SOURCE_DIR) / "configs/randomised-cpu.toml");
  ASSERT_EQ(sweep.runs.size(), 3u);
  for (int n = 0; n < 3; ++n) {
    const auto& run = sweep.runs[static_cast<std::size_t>(n)];
    EXPECT_EQ(fs::path(option(run, "model")).filename(), "randomised-cpu-" + std::to_string(n));
    EXPECT_EQ(option(run, "heads"), "");  // a flag
    EXPECT_EQ(run.table_columns.back(), "head_classes");
    EXPECT_EQ(fs::path(option(run, "corpus")).filename(), "tinyshakespeare.txt");
  }
}

// The training-series sweep: the default model's checkpoints, by step, with heads; before
// the series is trained its pattern is one run (skipped: the model is not there).
TEST(BatchJob, DefaultSeriesSweepRunsEveryCheckpointOfTheTrainingRun) {
  const auto sweep = jobs::readSweep(fs::path(POSGEOM_SOURCE_DIR) / "configs/default-series.toml");
  ASSERT_FALSE(sweep.runs.empty());
  for (const auto& run : sweep.runs) {
    const fs::path model = option(run, "model");
    EXPECT_EQ(model.parent_path().filename(), "default-series") << run.name;
    EXPECT_EQ(option(run, "heads"), "");
    if (run.checkpoint.empty()) EXPECT_EQ(model.filename(), "step_*");
    else EXPECT_TRUE(run.step.has_value()) << run.name;
  }
  for (std::size_t i = 1; i < sweep.runs.size(); ++i) EXPECT_LT(sweep.runs[i - 1].step, sweep.runs[i].step);
}

TEST(BatchJob, PaperReferencesAreThePublishedNumbers) {
  POSGEOM_REQUIRE_SHARED("data/reference/paper_table1.json");
  const auto paper = io::readJsonFile(sharedDir() / "data/reference/paper_table1.json");
  int files = 0;
  for (const auto& [model, corpora] : paper["models"].items())
    for (const auto& [corpus, numbers] : corpora.items()) {
      const auto ref = io::readJsonFile(kPaperConfig.parent_path() / "reference/paper-table1" / (model + "-" + corpus + ".json"));
      const auto& map = paper["layer_index_map"][model];
      ASSERT_EQ(ref["layers"].size(), map.size());
      for (std::size_t i = 0; i < map.size(); ++i) {
        const auto& l = ref["layers"][i];
        EXPECT_EQ(l["layer"], map[i]);
        EXPECT_EQ(l["screenot_rank"].get<double>(), numbers["screenot_rank"][i].get<double>());
        EXPECT_EQ(l["stable_rank"], numbers["stable_rank"][i]);
        EXPECT_EQ(l["relative_norm"], numbers["relative_norm"][i]);
      }
      EXPECT_EQ(ref["context_similarity"], numbers["context_similarity"]);
      EXPECT_TRUE(ref["tolerances"].contains("screenot_rank"));
      ++files;
    }
  EXPECT_EQ(files, 12);
}

// Acceptance: a sweep of the fixture models over the shared topic corpora runs; a missing
// model and a missing corpus are reported and skipped while the others still run.
TEST(BatchJob, FixtureSweepRunsAndSkipsWhatIsMissing) {
  POSGEOM_REQUIRE_SHARED("data/corpora/topics/wikitext-topic0.txt");
  ScratchDir s;
  const auto tok = writeByteTokenizer(s / "tok");
  const auto models = sharedDir() / "fixtures/models", topics = sharedDir() / "data/corpora/topics";
  fs::create_directories(s / "ref");
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
    EXPECT_EQ(by_name[ran].status, "ok") << ran << ": " << by_name[ran].message;
    EXPECT_TRUE(fs::exists(s / "out" / ran / "report.html")) << ran;
  }
  EXPECT_EQ(by_name["gpt2-wiki"].check_passed, false);
  EXPECT_TRUE(fs::exists(s / "out/gpt2-wiki/check.txt"));
  EXPECT_FALSE(by_name["gpt2-code"].check_passed.has_value());  // no reference for it
  EXPECT_EQ(by_name["gpt2-lost"].status, "skipped");
  EXPECT_NE(by_name["gpt2-lost"].message.find("lost-*.txt: matches no files"), std::string::npos) << by_name["gpt2-lost"].message;
  EXPECT_EQ(by_name["gone-wiki"].status, "skipped");
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
}

// A checkpoint series (train --save-every): a pattern's matches run in step order (2, 10,
// 100: numbers, not text), each into its own report; table.csv is keyed by step and the
// series page draws every step.
TEST(BatchJob, CheckpointSeriesRunsInStepOrderIntoATableByStep) {
  ScratchDir s;
  for (int step : {10, 2, 100}) {
    model::RandomCheckpointSpec spec;
    spec.layers = 2;
    spec.hidden_size = 32;
    spec.heads = 2;
    spec.vocab_size = 50;
    spec.max_positions = 64;
    spec.seed = static_cast<uint64_t>(step);
    model::writeRandomCheckpoint(spec, s / "series" / ("step_" + std::to_string(step)));
  }
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
  for (const auto& o : outcomes) ASSERT_EQ(o.status, "ok") << o.message;
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

TEST(BatchJob, MalformedSweepsNameTheFile) {
  ScratchDir s;
  auto message = [&](const std::string& text) {
    writeFile(s / "bad.toml", text);
    try {
      jobs::readSweep(s / "bad.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  const std::string file = (s / "bad.toml").string();
  EXPECT_EQ(message("[corpora.a]\ncorpus = \"random\"\n"), file + ": has no [models.<name>] table");
  EXPECT_EQ(message("outt = \"x\"\n"), file + ": unknown key 'outt' (out, reference, [analyze], [models.*], [corpora.*], [variants.*])");
  EXPECT_EQ(message("[models.a]\nmodel = \"m\"\nout = \"x\"\n[corpora.c]\ncorpus = \"random\"\n"),
            file + ": [models.a].out: is set by the sweep for each run");
  EXPECT_EQ(message("[models.a]\ntable-rows = 1\n[corpora.c]\ncorpus = \"random\"\n"),
            file + ": [models.a].table-rows: unknown sweep key (table-columns, table-layers)");
  // Found by the toml_config fuzz target: values of the wrong kind inside the sweep's own
  // keys were internal errors (a string among the layers) or undefined (a float one).
  const std::string model = "[corpora.c]\ncorpus = \"random\"\n[models.a]\nmodel = \"m\"\n";
  for (const char* layers : {"[0, \"stable_rank\"]", "[1e30]", "[2.5]"})
    EXPECT_EQ(message(model + "table-layers = " + layers + "\n"), file + ": [models.a].table-layers: must be an array of layer indices")
        << layers;
  EXPECT_EQ(message(model + "table-columns = [\"stable_rank\", 3]\n"),
            file + ": [models.a].table-columns: must be an array of column names");
  EXPECT_EQ(message("out = 3\n" + model), file + ": out must be a path (a string)");
  EXPECT_EQ(message("[corpora.c]\ncorpus = \"random\"\n[models.a]\nmodel = \"./runs-*/step_*\"\n"),
            file + ": [models.a] model: only the last component of a model pattern may hold * or ?");
  EXPECT_EQ(message("[corpora.c]\ncorpus = \"random\"\n[models.a]\nmodel = [\"./a\", 3]\n"),
            file + ": [models.a] model: a list of checkpoints must hold directory names (strings)");
}

}  // namespace
}  // namespace posgeom::testing
