#include "posgeom/heads/contextual_neurons.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

// A causal kernel: random weights over keys skip..n, rows summing to one.
Eigen::MatrixXf randomKernel(int t, int skip) {
  Eigen::MatrixXf k = Eigen::MatrixXf::Zero(t, t);
  for (int n = skip; n < t; ++n) {
    for (int i = skip; i <= n; ++i) k(n, i) = 0.2f + std::abs(static_cast<float>(Eigen::MatrixXf::Random(1, 1)(0)));
    k.row(n) /= k.row(n).sum();
  }
  return k;
}

struct NeuronCase {
  NeuronCircuitMaps circuit;
  std::vector<HeadReport> heads;
  Eigen::MatrixXd means;
  NeuronWindows windows;
};

NeuronCase randomSetup(int vocab, int t, int d, int dh, int n, int samples, int skip) {
  srand(17);
  NeuronCase s;
  s.circuit.token_inputs = Eigen::MatrixXf::Random(vocab, d);
  for (int h = 0; h < 3; ++h) s.circuit.wv.push_back(Eigen::MatrixXd::Random(dh, d)), s.circuit.wo.push_back(Eigen::MatrixXd::Random(d, dh));
  s.circuit.norm_weight = Eigen::VectorXd::Random(d).array() + 1.5;
  s.circuit.norm_bias = Eigen::VectorXd::Random(d);
  s.circuit.norm_eps = 1e-5;
  s.circuit.w_in = Eigen::MatrixXd::Random(n, d);
  s.circuit.b_in = Eigen::VectorXd::Random(n);
  const Eigen::MatrixXf shared = randomKernel(t, skip);
  for (int h = 0; h < 3; ++h) {
    HeadReport r;
    r.block = 0, r.head = h, r.contextual = h != 2;
    r.kernel = h == 0 ? shared : h == 1 ? Eigen::MatrixXf(0.999f * shared + 0.001f * randomKernel(t, skip)) : randomKernel(t, skip);
    s.heads.push_back(r);
  }
  s.means = Eigen::MatrixXd::Random(t, d);
  for (int c = 0; c < samples; ++c) {
    std::vector<int32_t> ids;
    for (int i = 0; i < t; ++i) ids.push_back(rand() % vocab);
    s.windows.ids.push_back(ids);
    s.windows.mlp_input.push_back(3 * Eigen::MatrixXd::Random(t, d));
  }
  return s;
}

Eigen::VectorXd layerNormRow(const Eigen::VectorXd& u, const NeuronCircuitMaps& c) {
  const double mean = u.mean(), var = (u.array() - mean).square().mean();
  return ((u.array() - mean) / std::sqrt(var + c.norm_eps) * c.norm_weight.array() + c.norm_bias.array()).matrix();
}

TEST(ContextualNeurons, EveryNumberAgreesWithTheDefinition) {
  const int vocab = 40, t = 10, n = 5, samples = 3, skip = 2;
  const NeuronCase s = randomSetup(vocab, t, 8, 2, n, samples, skip);
  NeuronOptions o;
  o.top_tokens = 4;
  o.skip = skip;
  const NeuronAnalysis a = analyzeNeurons(s.circuit, s.heads, s.means, s.windows, o, 2);

  // From the definition, in plain loops.
  const Eigen::VectorXd mean_input = s.means.bottomRows(t - skip).colwise().mean().transpose();
  double inv = 0;
  for (const auto& u : s.windows.mlp_input)
    for (int r = skip; r < t; ++r) {
      const double mean = u.row(r).mean();
      inv += 1 / std::sqrt((u.row(r).array() - mean).square().mean() + s.circuit.norm_eps) / (samples * (t - skip));
    }
  EXPECT_NEAR(a.inverse_scale, inv, 1e-12);
  // Token v through head h, read by neuron j.
  const auto through = [&](int h, const Eigen::VectorXd& x, int j) {
    Eigen::VectorXd z = s.circuit.wo[static_cast<std::size_t>(h)] * (s.circuit.wv[static_cast<std::size_t>(h)] * (x - mean_input));
    z.array() -= z.mean();
    return inv * (s.circuit.norm_weight.array() * s.circuit.w_in.row(j).transpose().array() * z.array()).sum();
  };
  const auto token = [&](int v) { return Eigen::VectorXd(s.circuit.token_inputs.row(v).cast<double>().transpose()); };
  ASSERT_EQ(a.neurons.size(), static_cast<std::size_t>(n));
  for (int j = 0; j < n; ++j) {
    Eigen::VectorXd c(vocab);
    for (int v = 0; v < vocab; ++v) c[v] = through(0, token(v), j) + through(1, token(v), j);  // heads 0, 1 contextual
    const double mean = c.mean(), sd = std::sqrt((c.array() - mean).square().mean());
    const auto r = std::find_if(a.neurons.begin(), a.neurons.end(), [j](const NeuronReport& x) { return x.neuron == j; });
    ASSERT_NE(r, a.neurons.end());
    EXPECT_NEAR(r->score, sd, 1e-10 * sd) << j;
    std::vector<int> order(vocab);
    std::iota(order.begin(), order.end(), 0);
    std::sort(order.begin(), order.end(), [&c](int x, int y) { return c[x] > c[y]; });
    for (int k = 0; k < 4; ++k) {
      EXPECT_EQ(r->top_positive[static_cast<std::size_t>(k)].first, order[static_cast<std::size_t>(k)]) << j;
      EXPECT_NEAR(r->top_positive[static_cast<std::size_t>(k)].second, c[order[static_cast<std::size_t>(k)]] - mean, 1e-10);
      EXPECT_EQ(r->top_negative[static_cast<std::size_t>(k)].first, order[static_cast<std::size_t>(vocab - 1 - k)]) << j;
    }
    // The prediction on each window against the real pre-activation, centred per position.
    Eigen::MatrixXd predicted(samples, t), actual(samples, t);
    for (int w = 0; w < samples; ++w)
      for (int q = skip; q < t; ++q) {
        double p = 0;
        for (int h = 0; h < 2; ++h)
          for (int i = 0; i < t; ++i)
            p += s.heads[static_cast<std::size_t>(h)].kernel(q, i) * through(h, token(s.windows.ids[static_cast<std::size_t>(w)][static_cast<std::size_t>(i)]), j);
        predicted(w, q) = p;
        actual(w, q) = s.circuit.w_in.row(j).dot(layerNormRow(s.windows.mlp_input[static_cast<std::size_t>(w)].row(q).transpose(), s.circuit)) + s.circuit.b_in[j];
      }
    double pa = 0, pp = 0, aa = 0;
    for (int q = skip; q < t; ++q)
      for (int w = 0; w < samples; ++w) {
        const double dp = predicted(w, q) - predicted.col(q).mean(), da = actual(w, q) - actual.col(q).mean();
        pa += dp * da, pp += dp * dp, aa += da * da;
      }
    EXPECT_NEAR(r->correlation, pa / std::sqrt(pp * aa), 1e-10) << j;
    const Eigen::VectorXd sp = predicted.rightCols(t - skip).rowwise().sum(), sa = actual.rightCols(t - skip).rowwise().sum();
    const Eigen::ArrayXd cp = sp.array() - sp.mean(), ca = sa.array() - sa.mean();
    EXPECT_NEAR(r->window_correlation, (cp * ca).sum() / std::sqrt(cp.square().sum() * ca.square().sum()), 1e-10) << j;
  }
  for (std::size_t i = 1; i < a.neurons.size(); ++i) EXPECT_GE(a.neurons[i - 1].score, a.neurons[i].score);
  // Heads 0 and 1 share a kernel (to 0.1%): one group; head 2 is not contextual.
  EXPECT_EQ(a.contextual_heads, (std::vector<int64_t>{0, 1}));
  ASSERT_EQ(a.groups.size(), 1u);
  EXPECT_EQ(a.groups[0].heads, (std::vector<int64_t>{0, 1}));
  EXPECT_NEAR(a.groups[0].min_similarity, kernelSimilarity(s.heads[0].kernel, s.heads[1].kernel, skip), 1e-15);
  EXPECT_GT(a.groups[0].min_similarity, 0.99);
}

TEST(ContextualNeurons, SimilarityGroupsAndNoContextualHeads) {
  const Eigen::MatrixXf a = randomKernel(12, 2), b = randomKernel(12, 2);
  EXPECT_DOUBLE_EQ(kernelSimilarity(a, a, 2), 1.0);
  EXPECT_LT(kernelSimilarity(a, b, 2), 1.0);
  NeuronCase s = randomSetup(20, 10, 6, 2, 3, 2, 2);
  for (auto& h : s.heads) h.contextual = false;
  const auto none = analyzeNeurons(s.circuit, s.heads, s.means, s.windows, {3, 0.8, 2}, 1);
  EXPECT_TRUE(none.neurons.empty());
  EXPECT_TRUE(none.groups.empty());
  // Unalike kernels stay apart.
  s = randomSetup(20, 10, 6, 2, 3, 2, 2);
  s.heads[2].contextual = true;
  const auto three = analyzeNeurons(s.circuit, s.heads, s.means, s.windows, {3, 0.999, 2}, 1);
  EXPECT_EQ(three.groups.size(), 2u);
}

}  // namespace
}  // namespace posgeom::testing
