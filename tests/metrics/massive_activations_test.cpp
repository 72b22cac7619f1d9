#include "posgeom/metrics/massive_activations.h"

#include <algorithm>
#include <cmath>

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// The variance shares from their definition over positions first..T-1.
metrics::VarianceShares directShares(const Sequences& h, int first) {
  const auto t = h.front().rows() - first;
  Eigen::RowVectorXd mu = Eigen::RowVectorXd::Zero(h.front().cols());
  for (const auto& x : h) mu += x.bottomRows(t).colwise().sum();
  mu /= static_cast<double>(h.size()) * static_cast<double>(t);
  double total = 0, position = 0, context = 0;
  for (const auto& x : h) {
    total += (x.bottomRows(t).rowwise() - mu).squaredNorm();
    context += static_cast<double>(t) * (x.bottomRows(t).colwise().mean() - mu).squaredNorm();
  }
  for (Eigen::Index p = first; p < h.front().rows(); ++p) {
    Eigen::RowVectorXd m = Eigen::RowVectorXd::Zero(h.front().cols());
    for (const auto& x : h) m += x.row(p);
    position += static_cast<double>(h.size()) * (m / static_cast<double>(h.size()) - mu).squaredNorm();
  }
  return {first, position / total, context / total, 1 - position / total - context / total};
}

double trueMedian(const Sequences& h) {
  std::vector<double> all;
  for (const auto& x : h)
    for (Eigen::Index i = 0; i < x.size(); ++i) all.push_back(std::abs(x.data()[i]));
  const auto mid = all.begin() + static_cast<std::ptrdiff_t>((all.size() + 1) / 2 - 1);
  std::nth_element(all.begin(), mid, all.end());
  return *mid;
}

// A planted massive dimension at position 0 of every window (a BOS token's): found with its
// position, the layer's median within the stated bound, the share of |pos_0| it makes and
// the variance shares with position 0 in and out equal to their definitions.
TEST(MassiveActivations, APlantedDimensionIsFoundAndPlacedInTheAnova) {
  auto h = randomSequences(12, 9, 6, 31);
  for (auto& x : h) x(0, 4) = 400 + x(0, 4);
  h[5](3, 1) = -60;  // large, not massive (below 100 x the median)
  const auto s = directStatisticsWithMagnitudes(h, 1);
  const auto got = metrics::massiveActivations(s);
  ASSERT_TRUE(got.has_value());
  const double median = trueMedian(h);
  EXPECT_NEAR(got->median_abs, median, got->median_relative_error * median);
  EXPECT_NEAR(got->median_relative_error, std::sqrt(17.0 / 16) - 1, 1e-15);
  ASSERT_EQ(got->top.size(), 6u);  // every dimension of a 6-wide model
  const auto& first = got->top.front();
  EXPECT_EQ(first.dim, 4);
  EXPECT_TRUE(first.massive);
  EXPECT_EQ(first.position, 0);
  EXPECT_EQ(first.positions, (std::vector<int64_t>{0}));
  EXPECT_EQ(first.token, 7);
  EXPECT_NEAR(first.times_median, first.max_abs / got->median_abs, 1e-12);
  EXPECT_EQ(got->massive_count, 1);
  EXPECT_EQ(got->top[1].dim, 1);
  EXPECT_FALSE(got->top[1].massive);
  EXPECT_TRUE(got->top[1].positions.empty());
  EXPECT_EQ(got->top_by_position.rows(), 6);
  EXPECT_EQ(got->top_by_position(0, 0), first.max_abs);
  // pos_0 from its definition: the mean of position 0 less the mean over every position.
  Eigen::RowVectorXd mu = Eigen::RowVectorXd::Zero(6), m0 = Eigen::RowVectorXd::Zero(6);
  for (const auto& x : h) {
    mu += x.colwise().sum();
    m0 += x.row(0);
  }
  const Eigen::RowVectorXd pos0 = m0 / 12.0 - mu / (12.0 * 9);
  EXPECT_NEAR(got->position0_norm, pos0.norm(), 1e-10 * pos0.norm());
  EXPECT_NEAR(got->position0_massive_share, pos0[4] * pos0[4] / pos0.squaredNorm(), 1e-12);
  EXPECT_EQ(got->top.front().pos0_share, got->position0_massive_share);  // the one massive dimension
  double dimension_shares = 0;
  for (const auto& d : got->top) dimension_shares += d.pos0_share;
  EXPECT_NEAR(dimension_shares, 1, 1e-12);  // every dimension of a 6-wide model
  EXPECT_GT(got->position0_massive_share, 0.99);
  for (const auto& [shares, first_position] : {std::pair{got->with_position_0, 0}, std::pair{got->without_position_0, 1}}) {
    const auto want = directShares(h, first_position);
    EXPECT_EQ(shares.first_position, first_position);
    EXPECT_NEAR(shares.position, want.position, 1e-10) << first_position;
    EXPECT_NEAR(shares.context, want.context, 1e-10) << first_position;
    EXPECT_NEAR(shares.residual, want.residual, 1e-10) << first_position;
  }
  // Position 0 in, the planted dimension is most of the positional variance.
  EXPECT_GT(got->with_position_0.position, 0.9);
  EXPECT_LT(got->without_position_0.position, 0.5);
}

TEST(MassiveActivations, NoneWithoutMagnitudesAndNothingMassiveInNoise) {
  const auto h = randomSequences(6, 5, 4, 32);
  EXPECT_FALSE(metrics::massiveActivations(directStatistics(h, 1)).has_value());
  const auto got = metrics::massiveActivations(directStatisticsWithMagnitudes(h, 1));
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->massive_count, 0);
  for (const auto& d : got->top) EXPECT_FALSE(d.massive);
  // Windows of one position: nothing is left without position 0 to share.
  const auto single = metrics::massiveActivations(directStatisticsWithMagnitudes(randomSequences(6, 1, 4, 33), 0));
  ASSERT_TRUE(single.has_value());
  EXPECT_EQ(single->without_position_0.first_position, 1);
  EXPECT_TRUE(std::isnan(single->without_position_0.position));
  EXPECT_TRUE(std::isnan(single->without_position_0.residual));
  EXPECT_NEAR(single->with_position_0.position + single->with_position_0.context + single->with_position_0.residual, 1, 1e-12);
}

TEST(MassiveActivations, TheMedianComesFromItsBin) {
  std::vector<double> counts(static_cast<std::size_t>(anova::kMagnitudeBins), 0.0);
  EXPECT_EQ(metrics::medianFromCounts(counts), 0);
  const auto one = static_cast<std::size_t>(anova::magnitudeBin(1.0));  // [1, 17/16)
  EXPECT_EQ(one, 127u * 16);
  EXPECT_EQ(anova::magnitudeBin(1.0624), 127 * 16);
  EXPECT_EQ(anova::magnitudeBin(-1.0626), 127 * 16 + 1);
  EXPECT_EQ(anova::magnitudeBin(0.75), 126 * 16 + 8);  // 2^-1 (1 + 8/16)
  EXPECT_EQ(anova::magnitudeBin(0.0), 0);
  EXPECT_EQ(anova::magnitudeBinLow(126 * 16 + 8), 0.75);
  EXPECT_EQ(anova::magnitudeBinHigh(126 * 16 + 8), 0.75 + 1.0 / 32);
  counts[one] = 3;
  counts[one + 16] = 2;  // [2, 2 + 1/8)
  EXPECT_DOUBLE_EQ(metrics::medianFromCounts(counts), std::sqrt(17.0 / 16));
  counts[one + 16] = 4;
  EXPECT_DOUBLE_EQ(metrics::medianFromCounts(counts), 2 * std::sqrt(17.0 / 16));
  counts[0] = 100;  // mostly zeros: the median is 0
  EXPECT_EQ(metrics::medianFromCounts(counts), 0);
}

}  // namespace
}  // namespace posgeom::testing
