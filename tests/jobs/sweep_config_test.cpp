#include "posgeom/jobs/sweep_config.h"

#include <algorithm>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "captured_log.h"
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

// The message of the InputError that reading `text` as a sweep gives ("no error" if none).
std::string sweepError(const fs::path& file, const std::string& text, const jobs::OptionCatalog& catalog = {}) {
  writeFile(file, text);
  try {
    jobs::readSweep(file, catalog);
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(SweepConfig, PaperSweepExpandsModelsCorporaAndVariants) {
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

// The randomisation experiment's sweep: the three trained levels on one corpus, with heads.
TEST(SweepConfig, RandomisationSweepNamesTheThreeLevels) {
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
TEST(SweepConfig, DefaultSeriesSweepRunsEveryCheckpointOfTheTrainingRun) {
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

// The reference files hold exactly the paper's numbers, at the mapped layers.
TEST(SweepConfig, PaperReferencesAreThePublishedNumbers) {
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

TEST(SweepConfig, MalformedSweepsNameTheFile) {
  ScratchDir s;
  auto message = [&](const std::string& text) { return sweepError(s / "bad.toml", text); };
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

// Found by probe 3 (cases 192, 194, 198, 210, 211, 206, 207): a misspelt key, a flag with a
// value, or a table key out of its set was CLI11's "The following arguments were not
// expected: 3 --seq_len", or dropped without a word; now one line names the file, the table
// and the key.
TEST(SweepConfig, KeysOutsideTheirSetNameTheFileTheTableAndTheKey) {
  ScratchDir s;
  const fs::path f = s / "bad.toml";
  const std::string file = f.string();
  const jobs::OptionCatalog analyze{{"model", false}, {"corpus", false}, {"seq-len", false}, {"heads", true}};
  const std::string corpora = "[corpora.c]\ncorpus = \"random\"\n";
  EXPECT_EQ(sweepError(f, corpora + "[models.d]\nmodell = \"m\"\n", analyze),
            file + ": [models.d].modell: is not an analyze option (did you mean model?)");
  EXPECT_EQ(sweepError(f, "[analyze]\nseq_len = 3\n" + corpora + "[models.d]\nmodel = \"m\"\n", analyze),
            file + ": [analyze].seq_len: is not an analyze option (did you mean seq-len?)");
  EXPECT_EQ(sweepError(f, corpora + "[models.d]\nmodel = \"m\"\nheads = \"yes\"\n", analyze),
            file + ": [models.d].heads: is a flag: true or false (got \"yes\")");
  EXPECT_EQ(sweepError(f, corpora + "[models.d]\nmodel = \"m\"\nseq-len = true\n", analyze),
            file + ": [models.d].seq-len: takes a value, not true");
  EXPECT_EQ(sweepError(f, corpora + "[models.d]\nmodel = \"m\"\n[variants.v]\nconfig = \"/etc/passwd\"\n", analyze),
            file + ": [variants.v].config: is not an analyze option: a sweep's tables hold the runs' options themselves");
  EXPECT_EQ(sweepError(f, corpora + "[models.d]\nmodel = \"m\"\nheads = true\n", analyze), "no error");
  // The sweep's own keys are checked without analyze's options.
  EXPECT_EQ(sweepError(f, "out = \"\"\n" + corpora + "[models.d]\nmodel = \"m\"\n"), file + ": out: is empty: name the directory the sweep writes into");
  const auto columns = sweepError(f, corpora + "[models.d]\nmodel = \"m\"\ntable-columns = [\"stable_rank\", \"stabel_rank\"]\n");
  EXPECT_EQ(columns.rfind(file + ": [models.d].table-columns: 'stabel_rank' is not a column (screenot_rank, ", 0), 0u) << columns;
  EXPECT_NE(columns.find("head_classes)"), std::string::npos) << columns;
  EXPECT_EQ(sweepError(f, corpora + "[models.d]\nmodel = \"m\"\ntable-layers = [0, -1]\n"),
            file + ": [models.d].table-layers: -1 is not a layer (hidden states are numbered from 0)");
}

// Probe 3, case 199: a model named "../../escaped" wrote its report outside out.
TEST(SweepConfig, NamesMustBePlainDirectoryNames) {
  ScratchDir s;
  const fs::path f = s / "bad.toml";
  const std::string rule = ": is not a plain directory name, and it names the run's directory in out (no '/' or '\\', no leading '.', no control characters)";
  EXPECT_EQ(sweepError(f, "[corpora.c]\ncorpus = \"random\"\n[models.\"../../escaped\"]\nmodel = \"m\"\n"),
            f.string() + ": [models.\"../../escaped\"]" + rule);
  EXPECT_EQ(sweepError(f, "[corpora.\"a/b\"]\ncorpus = \"random\"\n[models.m]\nmodel = \"m\"\n"), f.string() + ": [corpora.\"a/b\"]" + rule);
  EXPECT_EQ(sweepError(f, "[corpora.c]\ncorpus = \"random\"\n[models.m]\nmodel = \"m\"\n[variants.\"..\"]\n[variants.w]\n"),
            f.string() + ": [variants.\"..\"]" + rule);
  EXPECT_EQ(sweepError(f, "[corpora.c]\ncorpus = \"random\"\n[models.\"\"]\nmodel = \"m\"\n"), f.string() + ": [models.\"\"]" + rule);
  EXPECT_EQ(sweepError(f, "[corpora.c]\ncorpus = \"random\"\n[models.\"GPT-2 (small)\"]\nmodel = \"m\"\n"), "no error");
}

// Probe 3, case 200: model a-b x corpus wiki and model a x corpus b-wiki both wrote
// a-b-wiki; the second was "kept" and tabled with the first one's numbers.
TEST(SweepConfig, TwoRunsThatWouldShareADirectoryAreRefused) {
  ScratchDir s;
  const fs::path f = s / "clash.toml";
  EXPECT_EQ(sweepError(f, "[models.\"a-b\"]\nmodel = \"m\"\n[models.a]\nmodel = \"n\"\n[corpora.wiki]\ncorpus = \"random\"\n"
                          "[corpora.\"b-wiki\"]\ncorpus = \"random\"\n"),
            f.string() + ": [models.a-b] x [corpora.wiki] and [models.a] x [corpora.b-wiki] would both write a-b-wiki in out: "
                         "rename a model or corpus");
  // Two series whose pages would be one: their runs differ, their titles do not.
  for (const char* dir : {"x/step_1", "y/step_1"}) fs::create_directories(s / dir);
  EXPECT_EQ(sweepError(f, "[models.\"a-b\"]\nmodel = \"./x/step_*\"\n[models.a]\nmodel = \"./y/step_*\"\n[corpora.wiki]\ncorpus = \"random\"\n"
                          "[corpora.\"b-wiki\"]\ncorpus = \"random\"\n"),
            f.string() + ": [models.a-b] step_1 x [corpora.wiki] and [models.a] step_1 x [corpora.b-wiki] would both draw "
                         "series-a-b-wiki.html: rename a model or corpus");
}

// Probe 3, case 205: a reference directory with a typo checked nothing, and passed.
TEST(SweepConfig, AReferenceDirectoryHoldsEveryModelAndCorpusReference) {
  ScratchDir s;
  const fs::path f = s / "ref.toml";
  const std::string runs = "[models.m]\nmodel = \"m\"\n[corpora.c]\ncorpus = \"random\"\n[corpora.d]\ncorpus = \"random\"\n";
  EXPECT_EQ(sweepError(f, "reference = \"./no-such-dir\"\n" + runs), f.string() + ": reference: " + (s / "no-such-dir").string() + ": does not exist");
  fs::create_directories(s / "ref");
  writeFile(s / "ref/m-c.json", "{}");
  EXPECT_EQ(sweepError(f, "reference = \"./ref\"\n" + runs),
            f.string() + ": reference: " + (s / "ref").string() +
                " has no m-d.json: every model and corpus of the sweep is checked against its <model>-<corpus>.json");
  writeFile(s / "ref/m-d.json", "{}");
  EXPECT_EQ(sweepError(f, "reference = \"./ref\"\n" + runs), "no error");
}

// Probe 3, cases 201 and 203: files that match a series' pattern are named, not dropped
// silently; two checkpoints of one step (step_010, step_10) are refused.
TEST(SweepConfig, ASeriesNamesWhatItLeavesOutAndHoldsOneCheckpointAStep) {
  ScratchDir s;
  for (const char* dir : {"series/step_10", "series/step_30"}) fs::create_directories(s / dir);
  writeFile(s / "series/step_20", "a file");
  const CapturedLog log;
  const auto error = sweepError(s / "s.toml", "[models.s]\nmodel = \"./series/step_*\"\n[corpora.c]\ncorpus = \"random\"\n");
  EXPECT_EQ(error, "no error");
  EXPECT_NE(log.str().find("s.toml: [models.s] model: left out step_20: they match the pattern but are not checkpoint directories"),
            std::string::npos)
      << log.str();
  fs::create_directories(s / "series/step_010");
  EXPECT_EQ(sweepError(s / "s.toml", "[models.s]\nmodel = \"./series/step_*\"\n[corpora.c]\ncorpus = \"random\"\n"),
            (s / "s.toml").string() + ": [models.s] model: " + (s / "series/step_010").string() + " and " + (s / "series/step_10").string() +
                " are both step 10: a series holds one checkpoint a step");
}

}  // namespace
}  // namespace posgeom::testing
