#include "posgeom/pipeline/analyze_job.h"

#include <nlohmann/json.hpp>

#include <cstring>
#include <sstream>

#include "posgeom/anova/state_file.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/weights.h"

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

nlohmann::json summaryOf(const fs::path& dir) { return io::readJsonFile(dir / "summary.json"); }

TEST(AnalyzeJob, ActivationsReproduceThePlantedDecomposition) {
  POSGEOM_REQUIRE_SHARED("fixtures/metrics/anova_hidden.safetensors");
  ScratchDir s;
  pipeline::AnalyzeJob job;
  job.activations = sharedDir() / "fixtures/metrics/anova_hidden.safetensors";
  job.skip_first = 1;
  job.report.screenot_k = 10;
  job.out = s / "report";
  pipeline::runAnalyzeJob(job);
  const auto got = summaryOf(job.out);
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

// A tokenizer.json whose vocabulary is the 256 bytes: it fits the fixture models' 1000 ids.
fs::path writeByteTokenizer(const fs::path& dir) {
  nlohmann::json vocab = nlohmann::json::object();
  for (int b = 0; b < 256; ++b) vocab[tokenize::byteToUnicode()[static_cast<size_t>(b)]] = b;
  fs::create_directories(dir);
  writeFile(dir / "tokenizer.json",
            nlohmann::json{{"model", {{"type", "BPE"}, {"vocab", vocab}, {"merges", nlohmann::json::array()}}},
                           {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}}}}
                .dump());
  return dir;
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
  pipeline::AnalyzeJob job;
  job.model = (sharedDir() / "fixtures/models" / GetParam()).string();
  job.tokenizer = writeByteTokenizer(s / "tok");
  job.corpus.path = topicCorpus(s / "topics").string();
  job.seq_len = 48;
  job.batch_size = 4;
  job.report.screenot_k = 5;
  job.out = s / "report";
  pipeline::runAnalyzeJob(job);
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

TEST(AnalyzeJob, TwoShardsMergedEqualOneRun) {
  POSGEOM_REQUIRE_SHARED("data/corpora/tinyshakespeare.txt");
  ScratchDir s;
  pipeline::AnalyzeJob job;
  job.model = (sharedDir() / "fixtures/models/tiny-gpt2").string();
  job.tokenizer = writeByteTokenizer(s / "tok");
  job.corpus.path = (sharedDir() / "data/corpora/tinyshakespeare.txt").string();
  job.seq_len = 32;
  job.num_seqs = 30;
  job.batch_size = 1;  // float32 matrix products may round differently with another batch composition
  job.report.screenot_k = 5;
  job.out = s / "whole";
  pipeline::runAnalyzeJob(job);
  for (int i = 0; i < 2; ++i) {
    job.shard = std::to_string(i) + "/2";
    job.out = s / ("shard" + std::to_string(i));
    pipeline::runAnalyzeJob(job);
  }
  pipeline::runMergeJob({s / "shard0/state.safetensors", s / "shard1/state.safetensors"}, s / "merged", job.report, {});
  const auto whole = summaryOf(s / "whole"), merged = summaryOf(s / "merged");
  int compared = 0;
  for (std::size_t l = 0; l < whole["layers"].size(); ++l)
    for (const auto& [key, value] : whole["layers"][l].items()) {
      const auto& other = merged["layers"][l][key];
      if (value.is_number_float()) {
        EXPECT_NEAR(other.get<double>(), value.get<double>(), 1e-12 * std::max(1.0, std::abs(value.get<double>()))) << key;
        ++compared;
      } else if (value.is_number_integer()) {
        EXPECT_EQ(other, value) << key;
      }
    }
  EXPECT_GT(compared, 40);
  EXPECT_EQ(merged["data"]["windows"], 30);
}

TEST(AnalyzeJob, BadSettingsAreBadInputs) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  pipeline::AnalyzeJob job;
  job.model = (sharedDir() / "fixtures/models/tiny-gpt2").string();
  job.corpus.path = "random";
  job.num_seqs = 2;
  job.out = s / "r";
  job.seq_len = 129;
  EXPECT_THROW(pipeline::runAnalyzeJob(job), InputError);  // beyond 128 learned positions
  job.seq_len = 16;
  job.layers = "0,9";
  EXPECT_THROW(pipeline::runAnalyzeJob(job), InputError);
  job.layers = "all";
  job.report.screenot_k = 15;  // P is 15 x 64: k must stay below 15 and 2k+1 below 15
  EXPECT_THROW(pipeline::runAnalyzeJob(job), InputError);
  job.report.screenot_k = 3;
  job.num_seqs = 0;
  EXPECT_THROW(pipeline::runAnalyzeJob(job), InputError);  // random needs --num-seqs
}

TEST(AnalyzeJob, RandomTokensAreAnalysedToo) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  pipeline::AnalyzeJob job;
  job.model = (sharedDir() / "fixtures/models/tiny-llama").string();
  job.corpus.path = "random";
  job.num_seqs = 16;
  job.seq_len = 24;
  job.layers = "1,3";
  job.report.screenot_k = 3;
  job.out = s / "r";
  pipeline::runAnalyzeJob(job);
  const auto summary = summaryOf(job.out);
  ASSERT_EQ(summary["layers"].size(), 2u);
  EXPECT_EQ(summary["layers"][1]["layer"], 3);
  EXPECT_EQ(summary["layers"][0]["sequences"], 16);
}

}  // namespace
}  // namespace posgeom::testing

namespace posgeom::testing {
namespace {

Eigen::MatrixXd readCsv(const fs::path& path) {
  std::vector<std::vector<double>> rows;
  std::istringstream in(readFile(path));
  std::string line;
  while (std::getline(in, line)) {
    std::vector<double> row;
    std::istringstream cells(line);
    std::string cell;
    while (std::getline(cells, cell, ',')) row.push_back(std::stod(cell));
    rows.push_back(row);
  }
  Eigen::MatrixXd m(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(rows.at(0).size()));
  for (std::size_t r = 0; r < rows.size(); ++r)
    for (std::size_t c = 0; c < rows[r].size(); ++c) m(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(c)) = rows[r][c];
  return m;
}

// Runs --heads on random tokens and returns the report directory.
fs::path headsReport(const ScratchDir& s, const std::string& model) {
  pipeline::AnalyzeJob job;
  job.model = (sharedDir() / "fixtures/models" / model).string();
  job.corpus.path = "random";
  job.num_seqs = 12;
  job.seq_len = 24;
  job.heads = true;
  job.report.screenot_k = 3;
  job.out = s / model;
  pipeline::runAnalyzeJob(job);
  return job.out;
}

// The mean attention input of block 0 (feeding hidden.1) from the saved state.
Eigen::MatrixXd blockMeans(const fs::path& report) {
  const auto state = anova::loadState(report / "state.safetensors");
  for (const auto& l : state.layers)
    if (l.layer == 1) return l.attention_input_sum / static_cast<double>(l.sequences);
  return {};
}

Eigen::MatrixXd weight(const io::SafetensorsFile& f, const std::string& name) {
  const auto t = model::tensorFromView(f.get(name)).to(at::kDouble).contiguous();
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m(t.size(0), t.dim() > 1 ? t.size(1) : 1);
  std::memcpy(m.data(), t.data_ptr<double>(), static_cast<size_t>(m.size()) * sizeof(double));
  return m;
}

// Softmax over keys [skip, n] of the given logits row.
Eigen::VectorXd softmaxRow(const Eigen::VectorXd& logits) {
  const Eigen::VectorXd e = (logits.array() - logits.maxCoeff()).exp();
  return e / e.sum();
}

class HeadsOnFixtures : public ::testing::TestWithParam<std::string> {};

TEST_P(HeadsOnFixtures, EveryHeadGetsAKernel) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/" + GetParam());
  ScratchDir s;
  const auto report = headsReport(s, GetParam());
  const auto summary = summaryOf(report);
  const auto config = io::readJsonFile(sharedDir() / "fixtures/models" / GetParam() / "config.json");
  const int heads = config.value("n_head", config.value("num_attention_heads", 0));
  ASSERT_EQ(summary["heads"].size(), static_cast<std::size_t>(3 * heads));
  for (const auto& h : summary["heads"]) {
    EXPECT_GE(h["etc"].get<double>(), 1.0 - 1e-9);
    EXPECT_LE(h["etc"].get<double>(), h["keys"].get<double>() + 1e-9);
  }
  const auto kernels = readCsv(report / "kernel_L2.csv");
  for (Eigen::Index h = 0; h < kernels.rows(); ++h) EXPECT_NEAR(kernels.row(h).sum(), 1.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HeadsOnFixtures, ::testing::Values("tiny-gpt2", "tiny-bert", "tiny-bloom", "tiny-llama"));

TEST(Heads, BloomSlopesAndFusedLayoutByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-bloom");
  const Eigen::MatrixXd p = blockMeans(report);
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-bloom/model.safetensors");
  const Eigen::MatrixXd w = weight(f, "h.0.self_attention.query_key_value.weight");  // rows [head][q|k|v][12]
  const Eigen::MatrixXd b = weight(f, "h.0.self_attention.query_key_value.bias");
  const Eigen::MatrixXd kernels = readCsv(report / "kernel_L1.csv");
  const double slopes[6] = {0.25, 0.0625, 0.015625, 0.00390625, 0.5, 0.125};  // 6 heads: 4 geometric, then 2^-1, 2^-3
  const Eigen::Index n = 23, dh = 12, skip = 5;
  for (int h = 0; h < 6; ++h) {
    const Eigen::MatrixXd wq = w.middleRows(h * 3 * dh, dh), wk = w.middleRows(h * 3 * dh + dh, dh);
    const Eigen::VectorXd q = wq * p.row(n).transpose() + b.middleRows(h * 3 * dh, dh);
    Eigen::VectorXd logits(n - skip + 1);
    for (Eigen::Index i = skip; i <= n; ++i)
      logits[i - skip] = q.dot(wk * p.row(i).transpose()) / std::sqrt(12.0) - slopes[h] * static_cast<double>(n - i);
    const Eigen::VectorXd expected = softmaxRow(logits);
    for (Eigen::Index i = skip; i <= n; ++i) EXPECT_NEAR(kernels(h, i), expected[i - skip], 1e-9) << "head " << h;
  }
}

TEST(Heads, LlamaRotationsAndKeyHeadsByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-llama");
  const Eigen::MatrixXd p = blockMeans(report);
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-llama/model-00001-of-00002.safetensors");
  const Eigen::MatrixXd wq_all = weight(f, "model.layers.0.self_attn.q_proj.weight");  // [8*8, 64]
  const Eigen::MatrixXd wk_all = weight(f, "model.layers.0.self_attn.k_proj.weight");  // [4*8, 64]
  const Eigen::MatrixXd kernels = readCsv(report / "kernel_L1.csv");
  const Eigen::Index n = 23, dh = 8, skip = 5;
  auto rotate = [&](Eigen::VectorXd x, Eigen::Index pos) {  // HF rotate_half, theta 10000
    Eigen::VectorXd out(dh);
    for (Eigen::Index j = 0; j < dh / 2; ++j) {
      const double a = static_cast<double>(pos) * std::pow(10000.0, -2.0 * static_cast<double>(j) / dh);
      out[j] = x[j] * std::cos(a) - x[j + dh / 2] * std::sin(a);
      out[j + dh / 2] = x[j + dh / 2] * std::cos(a) + x[j] * std::sin(a);
    }
    return out;
  };
  for (int h = 0; h < 8; ++h) {
    const int kv = h / 2;  // 8 query heads share 4 key heads in pairs
    const Eigen::VectorXd q = rotate(wq_all.middleRows(h * dh, dh) * p.row(n).transpose(), n);
    Eigen::VectorXd logits(n - skip + 1);
    for (Eigen::Index i = skip; i <= n; ++i)
      logits[i - skip] = q.dot(rotate(wk_all.middleRows(kv * dh, dh) * p.row(i).transpose(), i)) / std::sqrt(8.0);
    const Eigen::VectorXd expected = softmaxRow(logits);
    for (Eigen::Index i = skip; i <= n; ++i) EXPECT_NEAR(kernels(h, i), expected[i - skip], 1e-6) << "head " << h;
  }
}

}  // namespace
}  // namespace posgeom::testing
