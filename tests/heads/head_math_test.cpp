#include "head_math.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;
const Eigen::VectorXd kNoNorm;

TEST(HeadMath, ProjectionRotatesEachRowToItsPosition) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(5, 3);
  const Eigen::MatrixXd w = Eigen::MatrixXd::Random(4, 3);
  const Eigen::VectorXd bias = Eigen::VectorXd::Random(4);
  const Eigen::MatrixXd plain = detail::project(x, w, &bias, {kNoNorm}, detail::RotaryTable(5, {}));
  EXPECT_LT((plain - ((x * w.transpose()).rowwise() + bias.transpose())).norm(), 1e-12);
  const Eigen::MatrixXd rotated = detail::project(x, w, &bias, {kNoNorm}, detail::RotaryTable(5, plainRope(100.0, 4)));
  for (Eigen::Index t = 0; t < 5; ++t)
    for (int j = 0; j < 2; ++j) {  // pair (j, j + 2) turns by t * 100^(-2j/4)
      const double a = static_cast<double>(t) * std::pow(100.0, -j / 2.0);
      EXPECT_NEAR(rotated(t, j), plain(t, j) * std::cos(a) - plain(t, j + 2) * std::sin(a), 1e-12);
      EXPECT_NEAR(rotated(t, j + 2), plain(t, j + 2) * std::cos(a) + plain(t, j) * std::sin(a), 1e-12);
    }
  EXPECT_LT((rotated.row(0) - plain.row(0)).norm(), 1e-15);  // position 0 does not turn
  // GPT-J's interleaved pairs (2j, 2j + 1), the same angles.
  const Eigen::MatrixXd interleaved = detail::project(x, w, &bias, {kNoNorm}, detail::RotaryTable(5, plainRope(100.0, 4), true));
  for (Eigen::Index t = 0; t < 5; ++t)
    for (int j = 0; j < 2; ++j) {
      const double a = static_cast<double>(t) * std::pow(100.0, -j / 2.0);
      EXPECT_NEAR(interleaved(t, 2 * j), plain(t, 2 * j) * std::cos(a) - plain(t, 2 * j + 1) * std::sin(a), 1e-12);
      EXPECT_NEAR(interleaved(t, 2 * j + 1), plain(t, 2 * j + 1) * std::cos(a) + plain(t, 2 * j) * std::sin(a), 1e-12);
    }
}

TEST(HeadMath, KeyRangesAndSoftmaxDenominator) {
  KernelSettings s;
  s.skip = 2;
  EXPECT_EQ(detail::keyRange(6, 10, s).count, 5);  // keys 2..6
  s.positions.mask.causal = false;
  EXPECT_EQ(detail::keyRange(6, 10, s).count, 8);  // keys 2..9
  Eigen::VectorXd logits(3);
  logits << 1000.0, 1001.0, 999.0;  // large: needs the max shift
  const double log_z = detail::softmaxInPlace(logits);
  EXPECT_NEAR(log_z, 1001.0 + std::log(std::exp(-1.0) + 1.0 + std::exp(-2.0)), 1e-9);
  EXPECT_NEAR(logits.sum(), 1.0, 1e-15);
  EXPECT_NEAR(logits[1], 1.0 / (std::exp(-1.0) + 1.0 + std::exp(-2.0)), 1e-12);
  KernelSettings alibi;
  alibi.positions.additive = positions::alibiTerm(0.25);
  Eigen::VectorXd row = Eigen::VectorXd::Constant(5, 2.0);
  detail::finishLogits(row, 6, {2, 5}, 0.5, alibi);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(row[i], 1.0 - 0.25 * (6 - (2 + i)), 1e-15);  // ALiBi: -m (n - i)
}

// Sliding windows keep keys i > n - window (from the skip on); the cap is cap tanh(x / cap)
// of the scaled logit, before ALiBi.
TEST(HeadMath, WindowedKeysAndCappedLogits) {
  KernelSettings s;
  s.skip = 2;
  s.positions.mask.window = 3;
  EXPECT_EQ(detail::keyRange(9, 12, s).first, 7);  // keys 7, 8, 9
  EXPECT_EQ(detail::keyRange(9, 12, s).count, 3);
  EXPECT_EQ(detail::keyRange(3, 12, s).first, 2);  // the skip still holds
  EXPECT_EQ(detail::keyRange(3, 12, s).count, 2);
  s.positions.logit_cap = 2.0;
  s.positions.additive = positions::alibiTerm(0.5);
  Eigen::VectorXd row(2);
  row << 10.0, -1.0;
  detail::finishLogits(row, 3, {2, 2}, 0.5, s);
  EXPECT_NEAR(row[0], 2.0 * std::tanh(5.0 / 2.0) - 0.5, 1e-15);
  EXPECT_NEAR(row[1], 2.0 * std::tanh(-0.5 / 2.0), 1e-15);
}

// Qwen3's per-head RMSNorm: each row over its root mean square (with eps), times the weights.
TEST(HeadMath, NormRowsIsRmsNormWithWeights) {
  Eigen::MatrixXd y(2, 4);
  y << 1, 2, 3, 4, -2, 0, 0, 2;
  const Eigen::MatrixXd raw = y;
  const Eigen::VectorXd w = (Eigen::VectorXd(4) << 1, 0.5, 2, -1).finished();
  detail::normRows(y, w, 1e-6);
  for (Eigen::Index t = 0; t < 2; ++t) {
    const double rms = std::sqrt(raw.row(t).squaredNorm() / 4 + 1e-6);
    for (Eigen::Index j = 0; j < 4; ++j) EXPECT_NEAR(y(t, j), raw(t, j) / rms * w[j], 1e-14);
  }
}

// A joint scale (DeepSeek's latent norm) leaves the leading coordinates it is told to (a
// key's shared rotary part); a latent of no rows scales nothing.
TEST(HeadMath, AJointScaleLeavesTheUnscaledCoordinates) {
  Eigen::MatrixXd y(2, 4);
  y << 1, 2, 3, 4, -2, 0, 1, 2;
  const Eigen::MatrixXd raw = y;
  const Eigen::VectorXd scale = (Eigen::VectorXd(2) << 0.5, 3).finished(), none;
  detail::shapeRows(y, {none, 1e-6, 0, &scale, 1});
  for (Eigen::Index t = 0; t < 2; ++t) {
    EXPECT_EQ(y(t, 0), raw(t, 0));
    for (Eigen::Index j = 1; j < 4; ++j) EXPECT_EQ(y(t, j), raw(t, j) * scale[t]);
  }
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(3, 5);
  EXPECT_EQ(detail::jointInverseRms(x, Eigen::MatrixXd(0, 5), Eigen::VectorXd(), 1e-6), Eigen::VectorXd::Ones(3));
  const Eigen::MatrixXd w = Eigen::MatrixXd::Random(2, 5);
  const Eigen::VectorXd b = Eigen::VectorXd::Random(2), got = detail::jointInverseRms(x, w, b, 1e-6);
  for (Eigen::Index t = 0; t < 3; ++t)
    EXPECT_NEAR(got[t], 1 / std::sqrt((w * x.row(t).transpose() + b).squaredNorm() / 2 + 1e-6), 1e-12);
}

// The entropy from the normaliser against -sum a log a of the weights, from near one-hot
// rows (where a difference form would cancel) to flat ones.
TEST(HeadMath, SoftmaxEntropyIsMinusSumALogA) {
  for (const double spread : {0.0, 0.1, 1.0, 10.0, 60.0}) {
    Eigen::VectorXd logits(40);
    for (Eigen::Index i = 0; i < 40; ++i) logits[i] = spread * std::sin(1.7 * static_cast<double>(i)) + 3.0;
    Eigen::VectorXd plain = logits, with_entropy = logits;
    const double lse = detail::softmaxInPlace(plain);
    const auto r = detail::softmaxWithEntropy(with_entropy);
    EXPECT_NEAR(r.log_normaliser, lse, 1e-13 * std::abs(lse));
    EXPECT_LT((with_entropy - plain).cwiseAbs().maxCoeff(), 1e-15);
    double h = 0;
    for (double a : plain)
      if (a > 0) h -= a * std::log(a);
    EXPECT_NEAR(r.entropy, h, 1e-12 * std::max(1.0, h)) << spread;
  }
}

}  // namespace
}  // namespace posgeom::testing
