#include "posgeom/anova/magnitude_statistics.h"

#include <stdexcept>

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

Sequences pick(const Sequences& h, const std::vector<int64_t>& windows) {
  Sequences part;
  for (const int64_t w : windows) part.push_back(h[static_cast<std::size_t>(w)]);
  return part;
}

std::vector<std::vector<int64_t>> idsOf(const std::vector<int64_t>& windows, int64_t t) {
  std::vector<std::vector<int64_t>> ids;
  for (const int64_t w : windows) {
    ids.emplace_back();
    for (int64_t p = 0; p < t; ++p) ids.back().push_back(100 * w + p);
  }
  return ids;
}

anova::MagnitudeStatistics of(const Sequences& h, const std::vector<int64_t>& windows) {
  return directMagnitudes(pick(h, windows), 2, windows, idsOf(windows, h.front().rows()));
}

// Maxima merge by max, counts and sums by addition: three shards give exactly what one run
// over every window gives, in either order.
TEST(MagnitudeStatistics, MergingShardsGivesTheWholeRun) {
  auto h = randomSequences(9, 6, 4, 11);
  h[7](0, 2) = 300;  // a planted massive activation: window 7, position 0, dimension 2
  const auto whole = of(h, {0, 1, 2, 3, 4, 5, 6, 7, 8});
  for (const auto& order : {std::vector<int>{0, 1, 2}, std::vector<int>{2, 0, 1}}) {
    const std::vector<std::vector<int64_t>> shards{{0, 3, 6}, {1, 4, 7}, {2, 5, 8}};
    auto merged = of(h, shards[static_cast<std::size_t>(order[0])]);
    anova::merge(merged, of(h, shards[static_cast<std::size_t>(order[1])]));
    anova::merge(merged, of(h, shards[static_cast<std::size_t>(order[2])]));
    EXPECT_EQ(merged.position_abs_max, whole.position_abs_max);
    EXPECT_EQ(merged.max_window, whole.max_window);
    EXPECT_EQ(merged.max_position, whole.max_position);
    EXPECT_EQ(merged.max_token, whole.max_token);
    EXPECT_EQ(merged.counts, whole.counts);
    EXPECT_TRUE(merged.skipped_position_sum.isApprox(whole.skipped_position_sum, 1e-13));
    EXPECT_TRUE(merged.position_square_sum.isApprox(whole.position_square_sum, 1e-13));
    EXPECT_NEAR(merged.context_square_sum, whole.context_square_sum, 1e-13 * whole.context_square_sum);
    EXPECT_NEAR(merged.context_square_sum_from_1, whole.context_square_sum_from_1, 1e-13 * whole.context_square_sum_from_1);
  }
  EXPECT_EQ(whole.max_window[2], 7);
  EXPECT_EQ(whole.max_position[2], 0);
  EXPECT_EQ(whole.max_token[2], 700);
  EXPECT_EQ(whole.absMax()[2], 300);
  double total = 0;
  for (const double c : whole.counts) total += c;
  EXPECT_EQ(total, 9 * 6 * 4);
}

// Equal maxima in several windows (every window's first token the same, as with a BOS
// token): the lowest window, then the lowest position, whichever shard comes first.
TEST(MagnitudeStatistics, TiesGoToTheLowestWindowThenPosition) {
  auto h = randomSequences(4, 5, 3, 12);
  for (auto& seq : h) seq(0, 1) = 50;
  h[3](4, 1) = -50;
  auto late = of(h, {3, 2});
  anova::merge(late, of(h, {1}));
  EXPECT_EQ(late.max_window[1], 1);
  auto early = of(h, {1});
  anova::merge(early, of(h, {3, 2}));
  EXPECT_EQ(early.max_window[1], 1);
  EXPECT_EQ(early.max_position[1], 0);
  const auto alone = of(h, {3});  // in one window, its first position of the two
  EXPECT_EQ(alone.max_position[1], 0);
}

TEST(MagnitudeStatistics, AStateWithoutThemLeavesNoneAndShapesMustAgree) {
  const auto h = randomSequences(2, 5, 3, 13);
  auto with = of(h, {0});
  anova::merge(with, anova::MagnitudeStatistics());
  EXPECT_TRUE(with.empty());
  auto a = of(h, {0});
  const auto other = directMagnitudes(randomSequences(1, 5, 4, 14), 2, {1});
  EXPECT_THROW(anova::merge(a, other), std::invalid_argument);
}

}  // namespace
}  // namespace posgeom::testing
