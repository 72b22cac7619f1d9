#include "posgeom/jobs/analyze_job.h"


#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <sstream>

#include "posgeom/anova/state_file.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/random_checkpoint.h"
#include "posgeom/model/load/weights.h"

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(AnalyzeJob, ActivationsReproduceThePlantedDecomposition) {
  POSGEOM_REQUIRE_SHARED("fixtures/metrics/anova_hidden.safetensors");
  ScratchDir s;
  pass::AnalyzeOptions job;
  job.activations = sharedDir() / "fixtures/metrics/anova_hidden.safetensors";
  job.skip_first = 1;
  job.report.screenot_k = 10;
  job.out = s / "report";
  const auto returned = jobs::runAnalyzeJob(job);
  const auto got = summaryOf(job.out);
  EXPECT_EQ(returned.summary, got);  // what the Python package's analyze() returns is what was written
  EXPECT_EQ(returned.layers.size(), got["layers"].size());
  const auto want = io::readJsonFile(sharedDir() / "fixtures/metrics/anova_expected.json");
  ASSERT_EQ(got["layers"].size(), want["layers"].size());
  auto near = [](double a, double b) { return std::abs(a - b) <= 1e-6 * std::abs(b); };
  for (std::size_t l = 0; l < want["layers"].size(); ++l) {
    const auto& g = got["layers"][l];
    const auto& w = want["layers"][l];
    EXPECT_EQ(g["screenot_rank"], w["screenot_rank"]);
    for (const auto& [ours, theirs] : std::vector<std::pair<std::string, std::string>>{
             {"stable_rank", "stable_rank"}, {"explained_ratio", "explained_ratio"}, {"relative_norm", "relative_norm_op"},
             {"global_mean_norm", "global_mean_norm"}, {"pos_fro_norm", "pos_fro_norm"}})
      EXPECT_TRUE(near(g[ours].get<double>(), w[theirs].get<double>())) << l << " " << ours << ": " << g[ours];
    for (std::size_t i = 0; i < w["top_singular_values_pos"].size(); ++i)
      EXPECT_TRUE(near(g["top_singular_values_pos"][i].get<double>(), w["top_singular_values_pos"][i].get<double>()));
  }
  EXPECT_TRUE(fs::exists(job.out / "state.safetensors"));
}

// Issue 36 end to end: tiny-gpt2 with 300 added to dimension 3 of its position embedding 0
// (a massive activation every window carries at position 0). analyze names dimension 3 at
// position 0 in hidden.0 with the magnitude the model gives it, from the embeddings
// themselves; two shards merged name the same maxima, window, position and token.
TEST(AnalyzeJob, APlantedMassiveActivationIsFoundWhereTheModelPutsIt) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2/model.safetensors");
  ScratchDir s;
  const auto from = sharedDir() / "fixtures/models/tiny-gpt2";
  fs::create_directories(s / "model");
  fs::copy_file(from / "config.json", s / "model/config.json");
  const auto file = io::SafetensorsFile::open(from / "model.safetensors");
  io::SafetensorsWriter w;
  std::vector<float> wpe, wte;
  for (const auto& [name, view] : file.tensors()) {
    if (name != "wpe.weight" && name != "wte.weight") {
      w.add(name, view.dtype, view.shape, view.data, view.nbytes);
      continue;
    }
    auto& values = name == "wpe.weight" ? wpe : wte;
    ASSERT_EQ(view.dtype, io::DType::kF32);
    values.resize(view.nbytes / sizeof(float));
    std::memcpy(values.data(), view.data, view.nbytes);
  }
  constexpr int64_t d = 64;
  wpe[3] += 300.0F;  // row 0, dimension 3
  w.addF32("wpe.weight", {static_cast<int64_t>(wpe.size()) / d, d}, wpe);
  w.addF32("wte.weight", {static_cast<int64_t>(wte.size()) / d, d}, wte);
  w.write(s / "model/model.safetensors");
  auto job = randomTokenRun("tiny-gpt2", 12, 16, s / "whole");
  job.model = (s / "model").string();
  job.batch_size = 1;  // the shards' batches as the whole run's: float32 batch sums alike
  jobs::runAnalyzeJob(job);
  const auto summary = summaryOf(job.out);
  const auto& layer0 = summary["layers"][0];
  ASSERT_EQ(layer0["layer"], 0);
  const auto& m = layer0["massive_activations"];
  const auto& top = m["top"][0];
  EXPECT_EQ(top["dim"], 3);
  EXPECT_EQ(top["position"], 0);
  EXPECT_TRUE(top["massive"].get<bool>());
  EXPECT_EQ(top["positions"], nlohmann::json::array({0}));
  EXPECT_EQ(m["massive_dimensions"], 1);
  // hidden.0 = wte[token] + wpe[position]: its magnitude from the checkpoint, at the token
  // the summary names, is the largest over every token the windows could hold.
  const auto token = top["token_id"].get<int64_t>();
  ASSERT_GE(token, 0);
  EXPECT_EQ(top["max_abs"].get<double>(), static_cast<double>(std::abs(wte[static_cast<std::size_t>(token * d + 3)] + wpe[3])));
  EXPECT_GT(m["position_0"]["massive_share"].get<double>(), 0.99);
  EXPECT_GT(m["variance_shares"]["with_position_0"]["position"].get<double>(),
            m["variance_shares"]["without_position_0"]["position"].get<double>());
  // Two shards merged: the same maxima and where they were, to the bit.
  analyzeShards(job, s.path(), 2);
  const auto merged = mergeShards(job, s.path(), 2);
  for (std::size_t l = 0; l < summary["layers"].size(); ++l) {
    auto a = merged["layers"][l]["massive_activations"]["top"], b = summary["layers"][l]["massive_activations"]["top"];
    ASSERT_EQ(a.size(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {  // the share of |pos_0|^2 is of sums, added in another order
      EXPECT_NEAR(a[i]["pos0_share"].get<double>(), b[i]["pos0_share"].get<double>(), 1e-12) << l;
      a[i].erase("pos0_share");
      b[i].erase("pos0_share");
    }
    EXPECT_EQ(a, b) << l;
  }
}

// The default --screenot-k (20) on a 32-wide model and 16-token windows: cut to the 6 that
// 15 positions allow (2k + 1 < 15), and the report records the bound it used.
TEST(AnalyzeJob, TheDefaultScreeNotBoundFitsANarrowModelAndShortWindows) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.layers = 2;
  spec.hidden_size = 32;
  spec.heads = 4;
  spec.max_positions = 64;
  model::writeRandomCheckpoint(spec, s / "m");
  pass::AnalyzeOptions job;
  job.model = (s / "m").string();
  job.corpus.path = "random";
  job.num_seqs = 4;
  job.seq_len = 16;
  job.out = s / "r";
  jobs::runAnalyzeJob(job);
  EXPECT_EQ(summaryOf(job.out)["report"]["screenot_k"], 6);
}

// Three topic files, shortened so that every topic gets windows.
fs::path topicCorpus(const fs::path& dir) {
  fs::create_directories(dir);
  for (const char* topic : {"openwebtext-topic0.txt", "wikitext-topic1.txt", "github-topic2.txt"})
    writeFile(dir / topic, readFile(sharedDir() / "data/corpora/topics" / topic).substr(0, 3000));
  return dir;
}

class AnalyzeFixtureModel : public ::testing::TestWithParam<std::string> {};

TEST_P(AnalyzeFixtureModel, EndToEndOnLabelledTopics) {
  POSGEOM_REQUIRE_SHARED("data/corpora/topics/github-topic2.txt");
  ScratchDir s;
  pass::AnalyzeOptions job;
  job.model = (sharedDir() / "fixtures/models" / GetParam()).string();
  job.tokenizer = writeByteTokenizer(s / "tok");
  job.corpus.path = topicCorpus(s / "topics").string();
  job.seq_len = 48;
  job.batch_size = 4;
  job.report.screenot_k = 5;
  job.out = s / "report";
  jobs::runAnalyzeJob(job);
  const auto summary = summaryOf(job.out);
  ASSERT_EQ(summary["layers"].size(), 4u);  // hidden.0 .. hidden.3
  for (const auto& l : summary["layers"]) {
    EXPECT_GT(l["sequences"].get<int>(), 100);
    EXPECT_GE(l["screenot_rank"].get<int>(), 0);
    EXPECT_GT(l["stable_rank"].get<double>(), 0.99);
    EXPECT_EQ(l["context_labels"], 3);
    EXPECT_TRUE(l.contains("context_cos_within_label"));
  }
  EXPECT_EQ(summary["data"]["documents"], 3);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, AnalyzeFixtureModel,
                         ::testing::Values("tiny-gpt2", "tiny-bert", "tiny-bloom", "tiny-llama", "tiny-gpt2-f16-prefixed"));

TEST(AnalyzeJob, TimingsNameEveryStage) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  auto job = randomTokenRun("tiny-gpt2", 4, 16, s / "plain");
  jobs::runAnalyzeJob(job);
  const auto plain = summaryOf(job.out)["timings"];
  for (const char* stage : {"load_s", "forward_and_accumulate_s", "metrics_s"}) EXPECT_GE(plain.value(stage, -1.0), 0) << stage;
  EXPECT_FALSE(plain.contains("heads_s"));
  job.heads = true;
  job.out = s / "heads";
  jobs::runAnalyzeJob(job);
  EXPECT_GT(summaryOf(job.out)["timings"].value("heads_s", -1.0), 0);
}

// What was asked and what ran: --batch-size 0 (auto) ran with some batch, recorded beside it.
TEST(AnalyzeJob, TheSummaryRecordsTheEffectiveValuesBesideTheRequestedOnes) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  auto job = randomTokenRun("tiny-gpt2", 6, 16, s / "r");
  job.batch_size = 0;
  jobs::runAnalyzeJob(job);
  const auto summary = summaryOf(job.out);
  EXPECT_EQ(summary["batch_size"], 0);
  EXPECT_GE(summary["effective"]["batch_size"].get<int64_t>(), 1);
  EXPECT_LE(summary["effective"]["batch_size"].get<int64_t>(), 6);  // never more windows than asked for
  EXPECT_GE(summary["effective"]["threads"].get<int64_t>(), 1);
  EXPECT_EQ(summary["data"]["windows"], 6);
}

TEST(AnalyzeJob, BadSettingsAreBadInputs) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  pass::AnalyzeOptions job;
  job.model = (sharedDir() / "fixtures/models/tiny-gpt2").string();
  job.corpus.path = "random";
  job.num_seqs = 2;
  job.out = s / "r";
  job.seq_len = 129;
  EXPECT_THROW(jobs::runAnalyzeJob(job), InputError);  // beyond 128 learned positions
  job.seq_len = 16;
  job.layers = pass::parseLayerSelection("0,9");
  EXPECT_THROW(jobs::runAnalyzeJob(job), InputError);
  job.layers = pass::parseLayerSelection("all");
  job.report.screenot_k = 15;  // P is 15 x 64: k must stay below 15 and 2k+1 below 15
  job.report.screenot_k_given = true;
  EXPECT_THROW(jobs::runAnalyzeJob(job), InputError);
  job.report.screenot_k = 3;
  job.num_seqs = 0;
  EXPECT_THROW(jobs::runAnalyzeJob(job), InputError);  // random needs --num-seqs
}

TEST(AnalyzeJob, RandomTokensAreAnalysedToo) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  pass::AnalyzeOptions job;
  job.model = (sharedDir() / "fixtures/models/tiny-llama").string();
  job.corpus.path = "random";
  job.num_seqs = 16;
  job.seq_len = 24;
  job.layers = pass::parseLayerSelection("1,3");
  job.report.screenot_k = 3;
  job.out = s / "r";
  jobs::runAnalyzeJob(job);
  const auto summary = summaryOf(job.out);
  ASSERT_EQ(summary["layers"].size(), 2u);
  EXPECT_EQ(summary["layers"][1]["layer"], 3);
  EXPECT_EQ(summary["layers"][0]["sequences"], 16);
}

}  // namespace
}  // namespace posgeom::testing

namespace posgeom::testing {
namespace {

const fs::path kDefaultModel = fs::path(POSGEOM_SOURCE_DIR) / "models/default";

// The unigram cross-entropy of the last 10% of the corpus' characters under the first
// 90%'s frequencies (add-one), computed here from the files themselves.
double unigramBaseline(const fs::path& dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir))
    if (e.is_regular_file() && e.path().filename().string()[0] != '.') files.push_back(e.path());
  std::sort(files.begin(), files.end());
  std::vector<std::string> chars;
  for (const auto& f : files) {
    const std::string text = readFile(f);
    for (std::size_t i = 0; i < text.size();) {
      const auto c = static_cast<unsigned char>(text[i]);
      const std::size_t n = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
      chars.push_back(text.substr(i, n));
      i += n;
    }
  }
  const std::size_t split = static_cast<std::size_t>(static_cast<double>(chars.size()) * 0.9);
  std::map<std::string, double> counts;
  for (const auto& c : chars) counts[c] = 1.0;  // add-one over the vocabulary
  const double vocab = static_cast<double>(counts.size()) + 1;  // + <unk>
  for (std::size_t i = 0; i < split; ++i) counts[chars[i]] += 1;
  double nats = 0;
  for (std::size_t i = split; i < chars.size(); ++i) nats -= std::log(counts[chars[i]] / (static_cast<double>(split) + vocab));
  return nats / static_cast<double>(chars.size() - split);
}

// Acceptance: the bundled model's recorded validation loss is clearly below the unigram
// baseline of its corpus.
TEST(DefaultModel, BeatsTheUnigramBaselineOfItsCorpus) {
  const auto info = io::readJsonFile(kDefaultModel / "training.json");
  const double baseline = unigramBaseline(jobs::kDefaultCorpus);
  EXPECT_NEAR(info["data"]["unigram_validation_loss"].get<double>(), baseline, 0.01 * baseline);
  EXPECT_LT(info["final_validation_loss"].get<double>(), 0.7 * baseline)
      << "validation loss " << info["final_validation_loss"] << " against a unigram baseline of " << baseline;
}

// Acceptance (the paper's claim, nothing trained here): the bundled model's positional basis
// is low-rank and smooth in its early layers, unlike the same architecture at random init.
TEST(DefaultModel, PositionalBasisIsLowRankAndSmoothUnlikeARandomInit) {
  ScratchDir s;
  const auto config = io::readJsonFile(kDefaultModel / "config.json");
  model::RandomCheckpointSpec spec;
  spec.layers = config["n_layer"];
  spec.hidden_size = config["n_embd"];
  spec.heads = config["n_head"];
  spec.vocab_size = config["vocab_size"];
  spec.max_positions = config["n_positions"];
  spec.seed = 3;
  model::writeRandomCheckpoint(spec, s / "random");
  fs::copy_file(kDefaultModel / "tokenizer.json", s / "random/tokenizer.json");
  auto analyse = [&](const std::string& model, const std::string& out) {
    pass::AnalyzeOptions job;
    job.model = model;  // empty: the bundled default; no corpus: the default corpus
    job.num_seqs = 96;
    job.layers = pass::parseLayerSelection("0,1,2");
    job.report.screenot_k = 10;
    job.out = s / out;
    jobs::runAnalyzeJob(job);
    return summaryOf(job.out);
  };
  const auto trained = analyse("", "trained-report"), random = analyse((s / "random").string(), "random-report");
  EXPECT_EQ(trained["model"], kDefaultModel.string());
  EXPECT_EQ(trained["corpus"], jobs::kDefaultCorpus);
  for (std::size_t l = 0; l < 2; ++l) {
    const auto& t = trained["layers"][l];
    const auto& r = random["layers"][l];
    EXPECT_GE(t["screenot_rank"].get<int>(), 1) << "layer " << l;
    EXPECT_LE(t["screenot_rank"].get<int>(), 8) << "layer " << l;
    EXPECT_GE(t["lowfreq_energy"].get<double>(), 0.5) << "layer " << l;
    EXPECT_GE(t["lowfreq_energy"].get<double>(), r["lowfreq_energy"].get<double>() + 0.3) << "layer " << l;
    EXPECT_GE(t["relative_norm"].get<double>(), 1.5 * r["relative_norm"].get<double>()) << "layer " << l;
    EXPECT_LT(4 * t["stable_rank"].get<double>(), r["stable_rank"].get<double>()) << "layer " << l;
  }
}

// --revision picks a snapshot of a hub name as from_pretrained(revision=...) does, and the
// summary records the commit it resolved to (a state of another commit does not resume).
TEST(AnalyzeJob, RevisionPicksTheSnapshotAndTheSummaryRecordsItsCommit) {
  ScratchDir s;
  const auto repo = s / "hub/models--org--steps";
  for (const char* commit : {"c0ffee0001", "c0ffee0002"}) {
    fs::create_directories(repo / "snapshots" / commit);
    fs::copy(hfFixtureDir("hf-gpt2"), repo / "snapshots" / commit, fs::copy_options::recursive);
  }
  fs::create_directories(repo / "refs");
  writeFile(repo / "refs/main", "c0ffee0002");
  writeFile(repo / "refs/step1000", "c0ffee0001");
  setenv("HF_HUB_CACHE", (s / "hub").c_str(), 1);
  auto analyse = [&](const std::string& revision, const std::string& out) {
    pass::AnalyzeOptions job;
    job.model = "org/steps";
    job.revision = revision;
    job.corpus.path = "random";
    job.num_seqs = 4;
    job.seq_len = 16;
    job.report.screenot_k = 3;
    job.out = s / out;
    jobs::runAnalyzeJob(job);
    return summaryOf(job.out);
  };
  const auto step = analyse("step1000", "step"), main = analyse("", "main");
  unsetenv("HF_HUB_CACHE");
  EXPECT_EQ(step["model_commit"], "c0ffee0001");
  EXPECT_NE(step["model"].get<std::string>().find("snapshots/c0ffee0001"), std::string::npos);
  EXPECT_EQ(main["model_commit"], "c0ffee0002");
}

// --layer-cosines, the paper's Appendix B.2 on random tokens: the mean cosine between every pair of hidden
// states, symmetric with ones on the diagonal, next to each other the previous-layer cosine
// the accumulator takes its own way; two shards merged give the one run's matrix.
TEST(AnalyzeJob, RandomTokensGiveTheCosineBetweenEveryPairOfLayers) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  auto job = randomTokenRun("tiny-gpt2", 8, 16, s / "whole");
  job.batch_size = 1;  // the shards' batches as the whole run's
  job.out = s / "plain";
  jobs::runAnalyzeJob(job);
  EXPECT_FALSE(summaryOf(job.out).contains("layer_cosine_matrix"));  // only where asked
  EXPECT_FALSE(summaryOf(job.out)["effective"].contains("layer_cosines"));
  EXPECT_FALSE(fs::exists(job.out / "layer_cosines.csv"));
  job.layer_cosines = true;
  job.out = s / "whole";
  jobs::runAnalyzeJob(job);
  const auto summary = summaryOf(job.out);
  EXPECT_EQ(summary["effective"]["layer_cosines"], true);  // measured: the pass stayed resident
  const auto& cosines = summary["layer_cosine_matrix"];
  const auto& layers = summary["layers"];
  ASSERT_EQ(cosines["layers"].size(), layers.size());
  const auto& c = cosines["cosine"];
  for (std::size_t i = 0; i < layers.size(); ++i) {
    EXPECT_EQ(cosines["layers"][i], layers[i]["layer"]);
    EXPECT_EQ(c[i][i], 1.0);
    for (std::size_t j = 0; j < i; ++j) EXPECT_EQ(c[i][j], c[j][i]);
    if (i > 0) {
      EXPECT_NEAR(c[i][i - 1].get<double>(), layers[i]["previous_layer_cosine"].get<double>(), 1e-6) << i;
    }
  }
  EXPECT_TRUE(fs::exists(job.out / "layer_cosines.csv"));
  EXPECT_NE(readFile(job.out / "report.html").find("id=\"fig-layer-cosines\""), std::string::npos);
  analyzeShards(job, s.path(), 2);
  const auto merged = mergeShards(job, s.path(), 2);
  for (std::size_t i = 0; i < layers.size(); ++i)
    for (std::size_t j = 0; j < layers.size(); ++j)
      EXPECT_NEAR(merged["layer_cosine_matrix"]["cosine"][i][j].get<double>(), c[i][j].get<double>(), 1e-12) << i << " " << j;
}

}  // namespace
}  // namespace posgeom::testing
