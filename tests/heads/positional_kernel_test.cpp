#include "posgeom/heads/positional_kernel.h"

#include <cmath>
#include <functional>
#include <memory>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

HeadMaps zeroHead(int dh, int d) { return {Eigen::MatrixXd::Zero(dh, d), Eigen::VectorXd::Zero(dh), Eigen::MatrixXd::Zero(dh, d), {}}; }

TEST(PositionalKernel, ZeroQueryGivesTheUniformKernel) {
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(20, 6);
  HeadMaps head = zeroHead(4, 6);
  head.wk = Eigen::MatrixXd::Random(4, 6);
  KernelSettings s;
  s.skip = 5;
  const auto k = positionalKernel(head, means, s);
  const auto etc = effectiveTokenCount(k);
  for (Eigen::Index n = 5; n < 20; ++n) {
    EXPECT_NEAR(k.row(n).sum(), 1.0, 1e-12);
    EXPECT_NEAR(etc[n], static_cast<double>(n - 5 + 1), 1e-9);  // every key counts
  }
  EXPECT_EQ(k.row(4).sum(), 0.0);
  s.positions.mask.causal = false;
  EXPECT_NEAR(effectiveTokenCount(positionalKernel(head, means, s))[7], 15.0, 1e-9);
  EXPECT_EQ(classify(etc[19], 15, {}), "uniform");
}

// OLMo-2's norm over all heads: the mean query's scale at position n is the root mean square
// of every head's projection of P_n, not of this head's alone (which would give another kernel).
TEST(PositionalKernel, AJointNormDividesByEveryHeadsRms) {
  const Eigen::Index t = 10, d = 5, dh = 2;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(t, d);
  HeadMaps head{Eigen::MatrixXd::Random(dh, d), Eigen::VectorXd::Random(dh), Eigen::MatrixXd::Random(dh, d), Eigen::VectorXd::Random(dh)};
  head.q_norm = Eigen::VectorXd::Random(dh);
  head.k_norm = Eigen::VectorXd::Random(dh);
  head.norm_eps = 1e-6;
  JointQkNorm joint;
  joint.wq = Eigen::MatrixXd::Random(3 * dh, d), joint.wk = Eigen::MatrixXd::Random(3 * dh, d);
  joint.bq = Eigen::VectorXd::Random(3 * dh), joint.bk = Eigen::VectorXd::Random(3 * dh);
  joint.wq.topRows(dh) = head.wq, joint.wk.topRows(dh) = head.wk, joint.bq.head(dh) = head.bq, joint.bk.head(dh) = head.bk;
  KernelSettings s;
  s.skip = 1;
  const Eigen::MatrixXd own = positionalKernel(head, means, s);  // each head's own norm (Qwen3)
  head.joint = std::make_shared<const JointQkNorm>(joint);
  const Eigen::MatrixXd k = positionalKernel(head, means, s);
  auto normed = [&](Eigen::Index i, const Eigen::MatrixXd& all_w, const Eigen::VectorXd& all_b, const Eigen::VectorXd& weights) {
    const Eigen::VectorXd all = all_w * means.row(i).transpose() + all_b;
    return Eigen::VectorXd(all.head(dh).cwiseProduct(weights) / std::sqrt(all.squaredNorm() / (3.0 * dh) + 1e-6));
  };
  for (Eigen::Index n = 1; n < t; ++n) {
    Eigen::VectorXd logits(n);
    for (Eigen::Index i = 1; i <= n; ++i)
      logits[i - 1] = normed(n, joint.wq, joint.bq, head.q_norm).dot(normed(i, joint.wk, joint.bk, head.k_norm)) / std::sqrt(2.0);
    const Eigen::VectorXd a = (logits.array() - logits.maxCoeff()).exp().matrix();
    for (Eigen::Index i = 1; i <= n; ++i) EXPECT_NEAR(k(n, i), a[i - 1] / a.sum(), 1e-13) << n << " " << i;
  }
  EXPECT_GT((k - own).cwiseAbs().maxCoeff(), 1e-3);
}

TEST(PositionalKernel, AlibiWithoutContentIsGeometric) {
  const double slope = 0.5;
  const Eigen::MatrixXd means = Eigen::MatrixXd::Random(40, 6);
  KernelSettings s;
  s.skip = 0;
  s.positions.additive = positions::alibiTerm(slope);
  const auto k = positionalKernel(zeroHead(4, 6), means, s);
  const Eigen::Index n = 39;
  // K_n(n - j) = r^j (1 - r) / (1 - r^(n+1)) with r = e^-slope.
  const double r = std::exp(-slope);
  const double norm = (1 - std::pow(r, n + 1)) / (1 - r);
  for (int j = 0; j < 5; ++j) EXPECT_NEAR(k(n, n - j), std::pow(r, j) / norm, 1e-12);
  double sq = 0;
  for (int j = 0; j <= n; ++j) sq += std::pow(std::pow(r, j) / norm, 2);
  EXPECT_NEAR(effectiveTokenCount(k)[n], 1.0 / sq, 1e-9);
  // 90% of the mass within w: smallest w with 1 - r^(w+1) >= 0.9 (n large): w = ceil(ln 0.1 / ln r) - 1.
  EXPECT_EQ(window90(k, n), static_cast<int64_t>(std::ceil(std::log(0.1) / std::log(r))) - 1);
  EXPECT_EQ(classify(effectiveTokenCount(k)[n], n + 1, {0.2, 0.5}), "local");  // ETC ~4.1 of 40 keys
}

TEST(PositionalKernel, RopeWithConstantKeysFollowsTheRotation) {
  // Keys constant over positions, query constant too: logits depend on n - i only
  // through the rotation, q R(n)^T... = q . R(i - n) k.
  const int d = 4, t = 12;
  Eigen::MatrixXd means = Eigen::MatrixXd::Ones(t, d);
  HeadMaps head{Eigen::MatrixXd::Identity(d, d), Eigen::VectorXd::Zero(d), Eigen::MatrixXd::Identity(d, d), {}};
  KernelSettings s;
  s.skip = 0;
  s.positions.rope.inverse_frequencies = plainRope(10.0, d);
  const auto k = positionalKernel(head, means, s);
  const Eigen::Index n = 11;
  Eigen::VectorXd logits(n + 1);
  for (Eigen::Index i = 0; i <= n; ++i) {
    double dot = 0;  // q = k = (1,1,1,1): each pair contributes 2 cos((n - i) * theta^(-2j/d))
    for (int j = 0; j < d / 2; ++j) dot += 2 * std::cos(static_cast<double>(n - i) * std::pow(10.0, -2.0 * j / d));
    logits[i] = dot / 2.0;  // / sqrt(dh)
  }
  const Eigen::VectorXd e = (logits.array() - logits.maxCoeff()).exp();
  for (Eigen::Index i = 0; i <= n; ++i) EXPECT_NEAR(k(n, i), e[i] / e.sum(), 1e-12);
}

TEST(PositionalKernel, WindowAndClasses) {
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(4, 4);
  k.row(3) << 0.05, 0.05, 0.1, 0.8;
  EXPECT_EQ(window90(k, 3), 1);
  EXPECT_EQ(classify(30, 100, {}), "slow-decay");
}

// A causal kernel K_n(i) = w(i) / sum_{j <= n} w(j) over the keys a query sees.
Eigen::MatrixXd causalKernel(int t, const std::function<double(int n, int i)>& weight) {
  Eigen::MatrixXd k = Eigen::MatrixXd::Zero(t, t);
  for (int n = 0; n < t; ++n) {
    for (int i = 0; i <= n; ++i) k(n, i) = weight(n, i);
    k.row(n) /= k.row(n).sum();
  }
  return k;
}

TEST(PositionalKernel, AKernelOfTheOffsetAloneIsTranslationEquivariant) {
  KernelSettings s;
  s.skip = 0;  // causal, every key
  const auto toeplitz = causalKernel(20, [](int n, int i) { return std::exp(-0.3 * (n - i)); });
  EXPECT_NEAR(translationEquivarianceTv(toeplitz, s), 0.0, 1e-12);
}

// Weights that grow with the key's absolute position: every query's offset profile differs.
// The score by hand: D = 10 offsets (half the last query's 20 keys), queries 9..19, each
// profile p_n(δ) ∝ n − δ + 1 compared with the last's.
TEST(PositionalKernel, AKernelOfTheAbsolutePositionIsNot) {
  KernelSettings s;
  s.skip = 0;
  const int t = 20, depth = 10;
  const auto absolute = causalKernel(t, [](int, int i) { return i + 1.0; });
  auto profile = [&](int n) {
    Eigen::VectorXd p(depth);
    for (int delta = 0; delta < depth; ++delta) p[delta] = n - delta + 1.0;
    return Eigen::VectorXd(p / p.sum());
  };
  double expected = 0;
  for (int n = depth - 1; n < t - 1; ++n) expected += 0.5 * (profile(n) - profile(t - 1)).cwiseAbs().sum() / (t - depth);
  EXPECT_NEAR(translationEquivarianceTv(absolute, s), expected, 1e-12);
  EXPECT_GT(expected, 0.05);
  // A single query has nothing to compare with.
  EXPECT_TRUE(std::isnan(translationEquivarianceTv(causalKernel(1, [](int, int) { return 1.0; }), s)));
}

TEST(PositionalKernel, MeanRowTvFromTheDefinition) {
  Eigen::MatrixXd a(3, 2), b(3, 2);
  a << 0, 0, 1, 0, 0.5, 0.5;
  b << 0, 0, 0, 1, 0.25, 0.75;
  EXPECT_NEAR(meanRowTv(a, b, 1), (1.0 + 0.25) / 2, 1e-15);  // rows 1 and 2
  EXPECT_NEAR(meanRowTv(a, a, 0), 0.0, 1e-15);
}

}  // namespace
}  // namespace posgeom::testing
