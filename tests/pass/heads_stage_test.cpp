#include "posgeom/pass/heads_stage.h"

#include <cmath>

#include "posgeom/anova/accumulator.h"
#include "posgeom/anova/state_file.h"
#include "posgeom/io/json_file.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/heads/sampled_attention.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/random_checkpoint.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/jobs/analyze_job.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// Runs --heads on random tokens and returns the report directory; `model` names a
// ../shared fixture, or a directory.
fs::path headsReport(const ScratchDir& s, const std::string& model, const std::string& query = "sampled",
                     const std::vector<std::pair<int64_t, int64_t>>& qk_heads = {}, const std::string& corpus = "random") {
  pass::AnalyzeOptions job;
  job.head_options.qk_maps = qk_heads;
  job.head_options.query = heads::parseQueryMode(query);
  job.model = fs::is_directory(model) ? model : (sharedDir() / "fixtures/models" / model).string();
  job.corpus.path = corpus;
  job.num_seqs = 12;
  job.seq_len = 24;
  job.heads = true;
  job.report.screenot_k = 3;
  job.out = s / (fs::path(model).filename().string() + "-" + query);
  jobs::runAnalyzeJob(job);
  return job.out;
}

// Block 0's (feeding hidden.1) saved statistics.
anova::LayerStatistics firstBlock(const fs::path& report) {
  const auto state = anova::loadState(report / "state.safetensors");
  for (const auto& l : state.layers)
    if (l.layer == 1) return l;
  return {};
}

// The mean attention input of block 0 from the saved state.
Eigen::MatrixXd blockMeans(const fs::path& report) {
  const auto l = firstBlock(report);
  return l.attention_input_sum / static_cast<double>(l.sequences);
}

// A one-block, one-head GPT-2 whose block adds its attention weights to the residual
// stream: no token content (wte = 0), one-hot positions, the value and output maps the
// identity, no MLP. Its query and key maps (with biases) stay random.
fs::path attentionProbeModel(const fs::path& dir, int64_t width) {
  model::RandomCheckpointSpec spec;
  spec.layers = 1;
  spec.hidden_size = width;
  spec.heads = 1;
  spec.vocab_size = 50;
  spec.max_positions = width;
  spec.init_std = 0.3;
  spec.seed = 11;
  model::writeRandomCheckpoint(spec, dir);
  const auto file = io::SafetensorsFile::open(dir / "model.safetensors");
  std::map<std::string, at::Tensor> tensors;
  for (const auto& [name, view] : file.tensors()) tensors[name] = model::tensorFromView(view).to(at::kFloat).clone();
  tensors["wte.weight"].zero_();
  tensors["wpe.weight"] = 5 * at::eye(width, at::kFloat);
  auto& qkv = tensors["h.0.attn.c_attn.weight"];  // Conv1D [in, out]: q | k | v
  qkv.narrow(1, 2 * width, width).copy_(at::eye(width, at::kFloat));
  tensors["h.0.attn.c_attn.bias"].narrow(0, 0, 2 * width).copy_(at::randn({2 * width}, at::kFloat) * 0.5);
  tensors["h.0.attn.c_attn.bias"].narrow(0, 2 * width, width).zero_();
  tensors["h.0.attn.c_proj.weight"] = at::eye(width, at::kFloat);
  tensors["h.0.attn.c_proj.bias"].zero_();
  tensors["h.0.mlp.c_proj.weight"].zero_();
  tensors["h.0.mlp.c_proj.bias"].zero_();
  io::SafetensorsWriter writer;
  for (const auto& [name, t] : tensors)
    writer.add(name, io::DType::kF32, t.sizes().vec(), t.data_ptr<float>(), static_cast<size_t>(t.numel()) * sizeof(float));
  writer.write(dir / "model.safetensors");
  return dir;
}

// The model's own attention weights a[n, i]: the block's output o_n = sum_i a[n,i] x_i
// solved for a, with x_i its attention inputs (independent while T <= width).
Eigen::MatrixXd attentionOfProbe(const fs::path& dir, int64_t t) {
  struct Capture : model::LayerObserver {
    at::Tensor h0, h1, x;
    void onHidden(int64_t layer, const at::Tensor& h) override { (layer == 0 ? h0 : h1) = h[0].to(at::kDouble); }
    void onAttentionInput(int64_t, const at::Tensor& normed) override { x = normed[0].to(at::kDouble); }
  } capture;
  const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
  model::ForwardRequest request;
  request.ids = at::randint(50, {1, t}, at::TensorOptions().dtype(at::kLong));
  request.observer = &capture;
  loaded.model->forward(request);
  const Eigen::MatrixXd x = anova::toEigen(capture.x), o = anova::toEigen(capture.h1 - capture.h0);
  return x.transpose().colPivHouseholderQr().solve(o.transpose()).transpose();  // [T, T]
}

// Acceptance: where content is constant, the kernel (mean or sampled queries) is the
// model's average attention, and the sampled statistics describe that same attention.
TEST(Heads, KernelEqualsTheModelsAttentionWhereContentIsConstant) {
  ScratchDir s;
  const int64_t t = 24;
  const auto dir = attentionProbeModel(s / "probe", 32);
  const Eigen::MatrixXd attention = attentionOfProbe(dir, t);
  for (Eigen::Index n = 0; n < t; ++n) EXPECT_NEAR(attention.row(n).sum(), 1.0, 1e-4);
  EXPECT_LT(attention.row(t - 1).maxCoeff(), 0.9);  // not trivially one-hot
  for (const std::string query : {"sampled", "mean"}) {
    pass::AnalyzeOptions job;
    job.model = dir.string();
    job.corpus.path = "random";  // any ids: wte = 0 makes every window the same
    job.num_seqs = 6;
    job.seq_len = t;
    job.heads = true;
    job.head_options.kernel_skip = 0;
    job.head_options.query = heads::parseQueryMode(query);
    job.report.screenot_k = 3;
    job.out = s / query;
    jobs::runAnalyzeJob(job);
    const Eigen::MatrixXd profile = readCsv(job.out / "kernel_B0.csv"), etc = readCsv(job.out / "etc_B0.csv");
    for (Eigen::Index i = 0; i < t; ++i) EXPECT_NEAR(profile(0, i), attention(t - 1, i), 2e-5) << query << " key " << i;
    double entropy = 0, keys90 = 0;
    for (Eigen::Index n = 0; n < t; ++n) {
      const Eigen::VectorXd a = attention.row(n).transpose().cwiseMax(1e-300);
      EXPECT_NEAR(etc(0, n), 1.0 / a.squaredNorm(), 1e-3 * etc(0, n)) << query << " query " << n;
      entropy -= (a.array() * a.array().log()).sum() / static_cast<double>(t);
      keys90 += static_cast<double>(heads::keysHolding(a, 0.9)) / static_cast<double>(t);
    }
    const auto head = summaryOf(job.out)["heads"][0];
    EXPECT_NEAR(head["attention_entropy"].get<double>(), entropy, 1e-3);
    EXPECT_NEAR(head["attention_keys90"].get<double>(), keys90, 1e-9);
    EXPECT_NEAR(head["denominator_cv"].get<double>(), 0.0, 1e-6);  // every context alike
    EXPECT_NEAR(head["qk_share_pos_pos"].get<double>(), 1.0, 1e-9);
    EXPECT_EQ(head["samples"], 6);
  }
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
  const auto kernels = readCsv(report / "kernel_B1.csv");
  for (Eigen::Index h = 0; h < kernels.rows(); ++h) EXPECT_NEAR(kernels.row(h).sum(), 1.0, 1e-9);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, HeadsOnFixtures, ::testing::Values("tiny-gpt2", "tiny-bert", "tiny-bloom", "tiny-llama"));

TEST(Heads, BloomSlopesAndFusedLayoutByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-bloom", "mean");
  const Eigen::MatrixXd p = blockMeans(report);
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-bloom/model.safetensors");
  const Eigen::MatrixXd w = weightMatrix(f, "h.0.self_attention.query_key_value.weight");  // rows [head][q|k|v][12]
  const Eigen::MatrixXd b = weightMatrix(f, "h.0.self_attention.query_key_value.bias");
  const Eigen::MatrixXd kernels = readCsv(report / "kernel_B0.csv");
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

// The default kernel averages sampled queries; the QK split, the actual attention and its
// denominator come from the same samples. All by hand from the state and BLOOM's weights.
TEST(Heads, BloomSampledQueriesAndQkSplitByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-bloom");
  const auto block = firstBlock(report);
  const Eigen::MatrixXd p = block.attention_input_sum / static_cast<double>(block.sequences);
  const Eigen::Index t = 24, dh = 12, skip = 5, samples = block.attention_samples.rows() / t;
  ASSERT_EQ(samples, 8);  // the default --head-samples
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-bloom/model.safetensors");
  const Eigen::MatrixXd w = weightMatrix(f, "h.0.self_attention.query_key_value.weight");
  const Eigen::MatrixXd b = weightMatrix(f, "h.0.self_attention.query_key_value.bias");
  const Eigen::MatrixXd kernels = readCsv(report / "kernel_B0.csv");
  const auto summary = summaryOf(report);
  const double slopes[2] = {0.25, 0.0625};
  for (int h = 0; h < 2; ++h) {
    const Eigen::MatrixXd wq = w.middleRows(h * 3 * dh, dh), wk = w.middleRows(h * 3 * dh + dh, dh);
    const Eigen::VectorXd bq = b.middleRows(h * 3 * dh, dh);
    Eigen::VectorXd kernel = Eigen::VectorXd::Zero(t);
    double energy[4] = {0, 0, 0, 0}, entropy = 0;
    for (Eigen::Index c = 0; c < samples; ++c) {
      const Eigen::MatrixXd x = block.attention_samples.middleRows(c * t, t);
      for (Eigen::Index n = skip; n < t; ++n) {
        const Eigen::VectorXd q_pos = wq * p.row(n).transpose() + bq, q_cvec = wq * (x.row(n) - p.row(n)).transpose();
        Eigen::VectorXd sampled(n - skip + 1), actual(n - skip + 1);
        for (Eigen::Index i = skip; i <= n; ++i) {
          const Eigen::VectorXd k_pos = wk * p.row(i).transpose(), k_cvec = wk * (x.row(i) - p.row(i)).transpose();
          const double parts[4] = {q_pos.dot(k_pos), q_pos.dot(k_cvec), q_cvec.dot(k_pos), q_cvec.dot(k_cvec)};
          for (int j = 0; j < 4; ++j) energy[j] += parts[j] * parts[j];
          const double bias = -slopes[h] * static_cast<double>(n - i);
          sampled[i - skip] = (q_pos + q_cvec).dot(k_pos) / std::sqrt(12.0) + bias;
          actual[i - skip] = (parts[0] + parts[1] + parts[2] + parts[3]) / std::sqrt(12.0) + bias;
        }
        if (n == t - 1) kernel.segment(skip, n - skip + 1) += softmaxRow(sampled) / static_cast<double>(samples);
        const Eigen::VectorXd a = softmaxRow(actual);
        entropy -= (a.array() * a.array().log()).sum() / static_cast<double>(samples * (t - skip));
      }
    }
    for (Eigen::Index i = skip; i < t; ++i) EXPECT_NEAR(kernels(h, i), kernel[i], 1e-6) << "head " << h;
    const auto& entry = summary["heads"][static_cast<std::size_t>(h)];
    const double total = energy[0] + energy[1] + energy[2] + energy[3];
    EXPECT_NEAR(entry["qk_share_pos_pos"].get<double>(), energy[0] / total, 1e-6);
    EXPECT_NEAR(entry["qk_share_pos_cvec"].get<double>(), energy[1] / total, 1e-6);
    EXPECT_NEAR(entry["qk_share_cvec_pos"].get<double>(), energy[2] / total, 1e-6);
    EXPECT_NEAR(entry["qk_share_cvec_cvec"].get<double>(), energy[3] / total, 1e-6);
    EXPECT_NEAR(entry["attention_entropy"].get<double>(), entropy, 1e-6);
  }
}

// --corpus repeated-random: the saved sampled windows are three copies of a stretch, and the
// induction and previous-token scores are those of BLOOM's attention computed by hand from
// the fused weights, with the heads above the bar named in the summary.
TEST(Heads, InductionProbeScoresByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-bloom", "sampled", {}, "repeated-random");
  const auto block = firstBlock(report);
  const Eigen::Index t = 24, dh = 12, skip = 5, period = 8, samples = block.attention_samples.rows() / t;
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-bloom/model.safetensors");
  const Eigen::MatrixXd w = weightMatrix(f, "h.0.self_attention.query_key_value.weight");
  const Eigen::MatrixXd b = weightMatrix(f, "h.0.self_attention.query_key_value.bias");
  const auto summary = summaryOf(report);
  EXPECT_EQ(summary["head_options"]["repeat_period"], period);
  const double slopes[2] = {0.25, 0.0625};
  for (int h = 0; h < 2; ++h) {
    const Eigen::MatrixXd wq = w.middleRows(h * 3 * dh, dh), wk = w.middleRows(h * 3 * dh + dh, dh);
    const Eigen::VectorXd bq = b.middleRows(h * 3 * dh, dh);
    Eigen::MatrixXd attention = Eigen::MatrixXd::Zero(t, t);
    for (Eigen::Index c = 0; c < samples; ++c) {
      const Eigen::MatrixXd x = block.attention_samples.middleRows(c * t, t);
      // BLOOM has no position embedding: block 0's inputs repeat exactly as the tokens do.
      if (h == 0) {
        for (Eigen::Index n = period; n < t; ++n) EXPECT_LT((x.row(n) - x.row(n - period)).norm(), 1e-6) << n;
        EXPECT_GT((x.row(1) - x.row(0)).norm(), 1e-3);
      }
      for (Eigen::Index n = skip; n < t; ++n) {
        Eigen::VectorXd logits(n - skip + 1);
        for (Eigen::Index i = skip; i <= n; ++i)
          logits[i - skip] = (wq * x.row(n).transpose() + bq).dot(wk * x.row(i).transpose()) / std::sqrt(12.0) -
                             slopes[h] * static_cast<double>(n - i);
        attention.row(n).segment(skip, n - skip + 1) += softmaxRow(logits).transpose() / static_cast<double>(samples);
      }
    }
    double induction = 0, previous = 0;
    int inductions = 0, previouses = 0;
    for (Eigen::Index n = period; n < t; ++n)
      if (n - period + 1 >= skip) induction += attention(n, n - period + 1), ++inductions;
    for (Eigen::Index n = skip + 1; n < t; ++n) previous += attention(n, n - 1), ++previouses;
    const auto& entry = summary["heads"][static_cast<std::size_t>(h)];
    EXPECT_NEAR(entry["induction_score"].get<double>(), induction / inductions, 1e-6) << h;
    EXPECT_NEAR(entry["previous_token_score"].get<double>(), previous / previouses, 1e-6) << h;
  }
  // Named: exactly the heads above the bar, highest first.
  for (const auto& [list, key] : {std::pair{"induction_heads", "induction_score"}, std::pair{"previous_token_heads", "previous_token_score"}}) {
    std::vector<std::pair<double, std::string>> expected;
    for (const auto& e : summary["heads"])
      if (e[key].get<double>() > heads::kPatternHeadAbove)
        expected.emplace_back(e[key].get<double>(), std::to_string(e["block"].get<int>()) + "." + std::to_string(e["head"].get<int>()));
    std::stable_sort(expected.begin(), expected.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
    ASSERT_EQ(summary["probe"][list].size(), expected.size()) << list;
    for (std::size_t i = 0; i < expected.size(); ++i) EXPECT_EQ(summary["probe"][list][i]["head"], expected[i].second) << list;
  }
  EXPECT_EQ(summary["probe"]["repeat_period"], period);
  EXPECT_NE(readFile(report / "report.html").find("id=\"fig-induction\""), std::string::npos);
}

// --qk-heads: W_QK in the positional basis from the checkpoint's own fused weights and
// the saved means, with Eigen's Jacobi SVD; only the asked head gets it.
TEST(Heads, QkBasisOfAnAskedHeadFromTheWeights) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-bloom", "sampled", {{0, 1}});
  const Eigen::MatrixXd p = blockMeans(report);
  const Eigen::Index dh = 12, skip = 5;
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-bloom/model.safetensors");
  const Eigen::MatrixXd w = weightMatrix(f, "h.0.self_attention.query_key_value.weight");
  const Eigen::MatrixXd wq = w.middleRows(1 * 3 * dh, dh), wk = w.middleRows(1 * 3 * dh + dh, dh);
  const Eigen::MatrixXd wqk = wq.transpose() * wk / std::sqrt(12.0);
  const Eigen::MatrixXd rows = p.bottomRows(p.rows() - skip);
  const Eigen::MatrixXd centred = rows.rowwise() - rows.colwise().mean();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(centred, Eigen::ComputeThinV);
  Eigen::Index m = 0;
  while (m < svd.singularValues().size() && svd.singularValues()[m] > 1e-9 * svd.singularValues()[0]) ++m;
  Eigen::MatrixXd rest = wqk;
  rest.diagonal().setZero();
  const Eigen::MatrixXd in_basis = svd.matrixV().leftCols(m).transpose() * rest * svd.matrixV().leftCols(m);
  const double tau = std::sqrt(2 * std::log(double(in_basis.size()))) * std::sqrt(in_basis.array().square().mean());
  const auto summary = summaryOf(report);
  const auto& head = summary["heads"][1];
  const auto r = head["qk_rank"].get<Eigen::Index>();
  const auto above = (in_basis.array().abs() > tau).eval();
  EXPECT_NEAR(head["qk_diagonal_share"].get<double>(), wqk.diagonal().squaredNorm() / wqk.squaredNorm(), 1e-9);
  EXPECT_NEAR(head["qk_block_share"].get<double>(),
              double(above.topLeftCorner(r, r).count()) / double(above.count()), 1e-12);
  EXPECT_TRUE(summary["heads"][0]["qk_diagonal_share"].is_null());  // not asked for
  const Eigen::MatrixXd standard = readCsv(report / "qkbasis_B0_H1_standard.csv");
  EXPECT_LT((standard - wqk.topLeftCorner(standard.rows(), standard.cols())).cwiseAbs().maxCoeff(), 1e-9);
  const Eigen::MatrixXd kept = readCsv(report / "qkbasis_B0_H1_positional.csv");
  ASSERT_EQ(kept.rows(), std::min<Eigen::Index>(m, 60));
  EXPECT_LT((kept.cwiseAbs() - above.topLeftCorner(kept.rows(), kept.cols()).select(in_basis.topLeftCorner(kept.rows(), kept.cols()), 0.0).cwiseAbs())
                .cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_FALSE(fs::exists(report / "qkbasis_B0_H0_standard.csv"));
}

// The mean-query kernel of block 0's rotary heads, from the weights and the saved means:
// q and k (with their biases, if any) rotated to their own positions, HF rotate_half with
// theta 10000, query heads sharing key heads in groups.
void expectRotaryKernelsByHand(const fs::path& report, const io::SafetensorsFile& f, const std::string& prefix,
                               Eigen::Index heads, Eigen::Index kv_heads, Eigen::Index dh, bool biases) {
  const Eigen::MatrixXd p = blockMeans(report);
  const Eigen::MatrixXd wq_all = weightMatrix(f, prefix + "q_proj.weight");  // [heads * dh, d]
  const Eigen::MatrixXd wk_all = weightMatrix(f, prefix + "k_proj.weight");  // [kv_heads * dh, d]
  const Eigen::VectorXd bq_all = biases ? Eigen::VectorXd(weightMatrix(f, prefix + "q_proj.bias")) : Eigen::VectorXd::Zero(heads * dh);
  const Eigen::VectorXd bk_all = biases ? Eigen::VectorXd(weightMatrix(f, prefix + "k_proj.bias")) : Eigen::VectorXd::Zero(kv_heads * dh);
  const Eigen::MatrixXd kernels = readCsv(report / "kernel_B0.csv");
  const Eigen::Index n = 23, skip = 5, group = heads / kv_heads;
  auto rotate = [&](Eigen::VectorXd x, Eigen::Index pos) {
    Eigen::VectorXd out(dh);
    for (Eigen::Index j = 0; j < dh / 2; ++j) {
      const double a = static_cast<double>(pos) * std::pow(10000.0, -2.0 * static_cast<double>(j) / static_cast<double>(dh));
      out[j] = x[j] * std::cos(a) - x[j + dh / 2] * std::sin(a);
      out[j + dh / 2] = x[j + dh / 2] * std::cos(a) + x[j] * std::sin(a);
    }
    return out;
  };
  for (Eigen::Index h = 0; h < heads; ++h) {
    const Eigen::Index kv = h / group;
    const Eigen::VectorXd q = rotate(wq_all.middleRows(h * dh, dh) * p.row(n).transpose() + bq_all.segment(h * dh, dh), n);
    Eigen::VectorXd logits(n - skip + 1);
    for (Eigen::Index i = skip; i <= n; ++i)
      logits[i - skip] =
          q.dot(rotate(wk_all.middleRows(kv * dh, dh) * p.row(i).transpose() + bk_all.segment(kv * dh, dh), i)) /
          std::sqrt(static_cast<double>(dh));
    const Eigen::VectorXd expected = softmaxRow(logits);
    for (Eigen::Index i = skip; i <= n; ++i) EXPECT_NEAR(kernels(h, i), expected[i - skip], 1e-6) << "head " << h;
  }
}

TEST(Heads, LlamaRotationsAndKeyHeadsByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-llama", "mean");
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-llama/model-00001-of-00002.safetensors");
  expectRotaryKernelsByHand(report, f, "model.layers.0.self_attn.", 8, 4, 8, false);
}

// Acceptance (issue 36): block 0's RoPE bands on a real checkpoint, from the weights and the
// saved means by hand (mean queries): each pair's term of q . k, q and k turned to their
// positions, four pairs of 8-wide heads a band each; their shares of the kernel's logits'
// variation over each query's keys, and the ETC of the kernel from the fastest pair alone
// and from the slowest.
TEST(Heads, LlamaRopeBandsByHand) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const auto report = headsReport(s, "tiny-llama", "mean");
  const auto f = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-llama/model-00001-of-00002.safetensors");
  const Eigen::MatrixXd p = blockMeans(report);
  const Eigen::MatrixXd wq_all = weightMatrix(f, "model.layers.0.self_attn.q_proj.weight");
  const Eigen::MatrixXd wk_all = weightMatrix(f, "model.layers.0.self_attn.k_proj.weight");
  const Eigen::Index dh = 8, pairs = 4, skip = 5, t = p.rows(), group = 2;
  // Pair j of x turned to position `pos`: (x_j, x_{j+4}) by pos theta^(-2j/8).
  auto pair = [&](const Eigen::VectorXd& x, Eigen::Index j, Eigen::Index pos) {
    const double a = static_cast<double>(pos) * std::pow(10000.0, -2.0 * static_cast<double>(j) / static_cast<double>(dh));
    return Eigen::Vector2d(x[j] * std::cos(a) - x[j + pairs] * std::sin(a), x[j + pairs] * std::cos(a) + x[j] * std::sin(a));
  };
  const auto summary = summaryOf(report);
  ASSERT_EQ(summary["rope_band_layout"][0]["bands"].size(), 4u);
  for (Eigen::Index h = 0; h < 8; ++h) {
    const Eigen::MatrixXd wq = wq_all.middleRows(h * dh, dh), wk = wk_all.middleRows(h / group * dh, dh);
    Eigen::Vector4d energy = Eigen::Vector4d::Zero();
    Eigen::VectorXd fastest(t - skip), slowest(t - skip);  // the last query's logits from one pair
    for (Eigen::Index n = skip; n < t; ++n) {
      Eigen::MatrixXd parts(pairs, n - skip + 1);  // [pair, key]
      for (Eigen::Index i = skip; i <= n; ++i)
        for (Eigen::Index j = 0; j < pairs; ++j)
          parts(j, i - skip) = pair(wq * p.row(n).transpose(), j, n).dot(pair(wk * p.row(i).transpose(), j, i));
      energy += (parts.colwise() - parts.rowwise().mean()).rowwise().squaredNorm();  // about the mean over the keys
      if (n == t - 1) fastest = parts.row(0).transpose() / std::sqrt(double(dh)), slowest = parts.row(pairs - 1).transpose() / std::sqrt(double(dh));
    }
    const auto& bands = summary["heads"][static_cast<std::size_t>(h)]["rope_bands"];
    for (Eigen::Index j = 0; j < pairs; ++j)
      EXPECT_NEAR(bands["kernel_share"][static_cast<std::size_t>(j)].get<double>(), energy[j] / energy.sum(), 1e-9) << "head " << h;
    EXPECT_NEAR(bands["etc_highest_band"].get<double>(), 1.0 / softmaxRow(fastest).squaredNorm(), 1e-6) << "head " << h;
    EXPECT_NEAR(bands["etc_lowest_band"].get<double>(), 1.0 / softmaxRow(slowest).squaredNorm(), 1e-6) << "head " << h;
  }
  EXPECT_TRUE(fs::exists(report / "rope_bands.csv"));
}

// Qwen2's key bias turns with its key's position: it is in the kernel, unlike an
// unrotated key bias (which cancels in the softmax).
TEST(Heads, Qwen2RotatedKeyBiasByHand) {
  ScratchDir s;
  const auto dir = hfFixtureDir("hf-qwen2");
  const auto report = headsReport(s, dir.string(), "mean");
  const auto f = io::SafetensorsFile::open(dir / "model.safetensors");
  expectRotaryKernelsByHand(report, f, "model.layers.0.self_attn.", 4, 2, 12, true);
}

// One token repeated: every window and every context alike, so each head's kernel is its
// attention. Against transformers' own attention maps on that input (tools/hf-goldens), in
// every block of every family: learned positions, ALiBi, plain and scaled RoPE (llama3,
// linear, dynamic), sliding windows, soft caps and scales (Gemma-2), q/k norms (Qwen3),
// two RoPE bases (Gemma-3), experts in the MLPs (Mixtral, Qwen-MoE: attention alike).
class KernelIsTransformersAttention : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelIsTransformersAttention, WhereContentIsConstant) {
  ScratchDir s;
  const auto dir = hfFixtureDir(GetParam());
  const auto golden = io::SafetensorsFile::open(dir / "golden.safetensors");
  const auto ids = model::tensorFromView(*golden.find("constant_ids"));
  const int64_t t = ids.size(1), token = ids[0][0].item<int64_t>();
  std::string corpus;
  for (int64_t i = 0; i < 4 * t; ++i) corpus.append(reinterpret_cast<const char*>(&token), 2);  // uint16, little-endian
  writeFile(s / "constant.bin", corpus);
  pass::AnalyzeOptions job;
  job.model = dir.string();
  job.corpus.path = (s / "constant.bin").string();
  job.num_seqs = 4;
  job.seq_len = t;
  job.heads = true;
  job.head_options.kernel_skip = 0;
  job.report.screenot_k = 3;
  job.head_options.keep_kernels = true;
  job.out = s / "report";
  jobs::runAnalyzeJob(job);
  int64_t blocks = 0;
  for (int64_t b = 0; golden.find("constant_attention." + std::to_string(b)); ++b, ++blocks) {
    const auto attention = model::tensorFromView(*golden.find("constant_attention." + std::to_string(b))).to(at::kDouble)[0];
    const Eigen::MatrixXd profile = readCsv(job.out / ("kernel_B" + std::to_string(b) + ".csv"));
    const Eigen::MatrixXd etc = readCsv(job.out / ("etc_B" + std::to_string(b) + ".csv"));
    ASSERT_EQ(profile.rows(), attention.size(0)) << "block " << b;
    // --save-kernels: the kernels at every query, both the default and the mean-query one.
    const auto saved = io::SafetensorsFile::open(job.out / ("kernels_B" + std::to_string(b) + ".safetensors"));
    const auto kernels = model::tensorFromView(saved.get("kernel")).to(at::kDouble);
    const auto mean_query = model::tensorFromView(saved.get("mean_query_kernel")).to(at::kDouble);
    ASSERT_EQ(kernels.sizes(), attention.sizes()) << "block " << b;
    EXPECT_LT((kernels - attention).abs().max().item<double>(), 2e-5) << "block " << b;
    EXPECT_LT((mean_query - attention).abs().max().item<double>(), 2e-5) << "block " << b;
    for (Eigen::Index h = 0; h < profile.rows(); ++h) {
      const Eigen::MatrixXd a = anova::toEigen(attention[h]);  // [query, key]
      for (Eigen::Index i = 0; i < t; ++i)
        EXPECT_NEAR(profile(h, i), a(t - 1, i), 2e-5) << "block " << b << " head " << h << " key " << i;
      // ETC of the row over its keys: 1 / sum a^2 where it sums to one, renormalised where a
      // sink took a share.
      for (Eigen::Index n = 0; n < t; ++n)
        EXPECT_NEAR(etc(h, n), std::pow(a.row(n).sum(), 2) / a.row(n).squaredNorm(), 1e-4 * etc(h, n))
            << "block " << b << " head " << h;
    }
  }
  EXPECT_EQ(blocks, model::loadModelConfig(dir).num_layers);  // every block compared
  // With sinks (gpt-oss), what the keys do not take went there: the summary says how much.
  const auto summary = nlohmann::json::parse(readFile(job.out / "summary.json"));
  const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
  for (const auto& head : summary["heads"]) {
    const int64_t b = head["block"].get<int64_t>(), h = head["head"].get<int64_t>();
    const auto attention = model::tensorFromView(*golden.find("constant_attention." + std::to_string(b))).to(at::kDouble)[0][h];
    // Over the whole softmax (the skip is 0 here), from query 1 on: transformers' own weight on
    // key 0 and on the query's own key.
    const auto later = attention.narrow(0, 1, t - 1);
    EXPECT_NEAR(head["sink_share"].get<double>(), later.select(1, 0).mean().item<double>(), 2e-5) << head.dump();
    EXPECT_NEAR(head["self_share"].get<double>(), later.diagonal(1).mean().item<double>(), 2e-5) << head.dump();
    EXPECT_TRUE(head["first_keys_share"].is_null()) << head.dump();  // no skipped keys
    // RoPE's bands, for every head the model turns: content is constant, so the attention's
    // logits are the kernel's.
    const bool turns = !loaded.model->kernelPositions(b, t).shared.rope.inverse_frequencies.empty();
    EXPECT_EQ(!head["rope_bands"].is_null(), turns) << head.dump();
    if (turns) {
      double sum = 0;
      for (std::size_t i = 0; i < head["rope_bands"]["kernel_share"].size(); ++i) {
        sum += head["rope_bands"]["kernel_share"][i].get<double>();
        EXPECT_NEAR(head["rope_bands"]["attention_share"][i].get<double>(), head["rope_bands"]["kernel_share"][i].get<double>(), 1e-9);
      }
      EXPECT_NEAR(sum, 1.0, 1e-12) << head.dump();
    }
    const bool sinks = !loaded.model->kernelPositions(b, t).sinks.empty();
    if (!sinks) {
      EXPECT_TRUE(head["learned_sink_share"].is_null()) << head.dump();
      continue;
    }
    const double sunk = 1.0 - attention.sum(-1).mean().item<double>();  // every query: the skip is 0
    EXPECT_NEAR(head["learned_sink_share"].get<double>(), sunk, 2e-5) << head.dump();
    EXPECT_NEAR(head["kernel_learned_sink_share"].get<double>(), sunk, 2e-5) << head.dump();
  }
}

INSTANTIATE_TEST_SUITE_P(HfFamilies, KernelIsTransformersAttention,
                         ::testing::Values("hf-gpt2", "hf-bert", "hf-bloom", "hf-llama", "hf-llama3", "hf-llama-linear", "hf-llama-yarn",
                                           "hf-llama-dynamic", "hf-mistral", "hf-qwen2", "hf-qwen2-sliding", "hf-qwen3",
                                           "hf-gemma", "hf-gemma2", "hf-gpt-neox", "hf-gpt-neox-serial",
                                           "hf-gpt-neo", "hf-roberta", "hf-opt", "hf-opt-350m", "hf-gptj",
                                           "hf-phi3", "hf-olmo", "hf-granite", "hf-smollm3", "hf-phi", "hf-stablelm", "hf-starcoder2", "hf-cohere",
                                           "hf-mixtral", "hf-qwen2-moe", "hf-qwen3-moe", "hf-gemma3", "hf-mpt", "hf-olmo2", "hf-olmoe", "hf-phi3-longrope",
                                           "hf-t5", "hf-mt5", "hf-modernbert", "hf-modernbert-biased",
                                           "hf-falcon", "hf-falcon2", "hf-falcon-7b", "hf-falcon-serial", "hf-gpt-oss", "hf-gemma3-multimodal", "hf-olmo3", "hf-cohere2",
                                           "hf-deepseek-v3", "hf-deepseek-v3-plain", "hf-deepseek-v2", "hf-deepseek-v2-grouped", "hf-cohere-qk-norm",
                                           "hf-deberta-v3", "hf-deberta-v2", "hf-stablelm-2-12b"),
                         [](const ::testing::TestParamInfo<std::string>& param) {
                           std::string n = param.param;
                           for (auto& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

// What a state records of the heads options reads back as the same options (a merge
// analyses the heads as the run did); keys it lacks keep the defaults given.
TEST(HeadSettings, RecordedAndReadBackAsTheRunHadThem) {
  heads::HeadOptions o;
  o.kernel_skip = 3;
  o.query = heads::QueryMode::kMeanEmbedding;
  o.thresholds = {0.05, 0.7};
  o.contextual_cv = 0.3;
  o.repeat_period = 21;
  const auto recorded = pass::headSettingsJson(o, 4);
  EXPECT_EQ(recorded, nlohmann::json::parse(R"({"kernel_skip": 3, "query": "mean", "samples": 4, "local_below": 0.05,
                                                "uniform_above": 0.7, "contextual_cv_below": 0.3, "repeat_period": 21})"));
  EXPECT_TRUE(recorded["kernel_skip"].is_number_integer());
  heads::HeadOptions defaults;
  defaults.subspace_k = 7;
  const auto back = pass::headOptionsFromSettings(recorded, defaults);
  EXPECT_EQ(back.kernel_skip, 3);
  EXPECT_EQ(back.query, heads::QueryMode::kMeanEmbedding);
  EXPECT_EQ(back.thresholds.local, 0.05);
  EXPECT_EQ(back.thresholds.uniform, 0.7);
  EXPECT_EQ(back.contextual_cv, 0.3);
  EXPECT_EQ(back.repeat_period, 21);
  EXPECT_EQ(back.subspace_k, 7);
  EXPECT_FALSE(pass::headSettingsJson(defaults, 4).contains("repeat_period"));
  const auto sparse = pass::headOptionsFromSettings(nlohmann::json{{"kernel_skip", 2}}, defaults);
  EXPECT_EQ(sparse.kernel_skip, 2);
  EXPECT_EQ(sparse.thresholds.uniform, defaults.thresholds.uniform);
  EXPECT_EQ(sparse.contextual_cv, defaults.contextual_cv);
  EXPECT_EQ(pass::headOptionsFromSettings(nullptr, defaults).kernel_skip, defaults.kernel_skip);
}

}  // namespace
}  // namespace posgeom::testing
