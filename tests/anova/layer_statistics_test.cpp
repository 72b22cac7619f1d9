#include "posgeom/anova/layer_statistics.h"

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

anova::LayerStatistics subset(const Sequences& h, const std::vector<int>& windows) {
  Sequences part;
  for (int w : windows) part.push_back(h[static_cast<size_t>(w)]);
  auto s = directStatistics(part, 1);
  for (std::size_t i = 0; i < windows.size(); ++i) {
    s.context_windows[i] = windows[i];
    s.context_labels[i] = windows[i] % 2 ? "odd" : "even";
  }
  return s;
}

TEST(LayerStatistics, MergingShardsGivesTheWholeRun) {
  const auto h = randomSequences(9, 6, 4, 2);
  const auto whole = directStatistics(h, 1);
  auto merged = subset(h, {0, 3, 6});
  anova::merge(merged, subset(h, {1, 4, 7}), {});
  anova::merge(merged, subset(h, {2, 5, 8}), {});
  EXPECT_EQ(merged.sequences, 9);
  EXPECT_TRUE(merged.position_sum.isApprox(whole.position_sum, 1e-13));
  EXPECT_TRUE(merged.second_moment.isApprox(whole.second_moment, 1e-13));
  EXPECT_TRUE(merged.context_means.isApprox(whole.context_means, 1e-13));  // reordered by window
  EXPECT_EQ(merged.context_windows, whole.context_windows);
  EXPECT_EQ(merged.context_labels, whole.context_labels);
}

TEST(LayerStatistics, CapsKeepTheLowestWindows) {
  const auto h = randomSequences(6, 5, 3, 3);
  auto a = subset(h, {1, 3, 5});
  anova::SampleCaps caps;
  caps.contexts = 2;
  anova::merge(a, subset(h, {0, 2, 4}), caps);
  EXPECT_EQ(a.context_windows, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(a.context_means.rows(), 2);
}

TEST(LayerStatistics, MismatchedShapesRefuseToMerge) {
  auto a = directStatistics(randomSequences(2, 5, 3, 4), 1);
  const auto b = directStatistics(randomSequences(2, 6, 3, 4), 1);
  EXPECT_THROW(anova::merge(a, b, {}), std::invalid_argument);
}

// Shards' cosines between layers add; with a shard without them (one that went layer-major)
// the merge has none: a partial sum is no one's mean.
TEST(LayerStatistics, LayerCosinesAddWhereBothSidesHaveThem) {
  const auto h = randomSequences(4, 5, 3, 6);
  auto a = subset(h, {0, 2}), b = subset(h, {1, 3});
  a.layer = b.layer = 2;
  a.layer_cosines = b.layer_cosines = true;
  a.earlier_cosine_sums = Eigen::Vector2d(1.0, 2.0);
  b.earlier_cosine_sums = Eigen::Vector2d(0.5, -1.0);
  auto merged = a;
  anova::merge(merged, b, {});
  EXPECT_EQ(merged.earlier_cosine_sums, Eigen::VectorXd(Eigen::Vector2d(1.5, 1.0)));
  auto plain = b;
  plain.layer_cosines = false;
  plain.earlier_cosine_sums.resize(0);
  anova::merge(a, plain, {});
  EXPECT_FALSE(a.layer_cosines);
  EXPECT_EQ(a.earlier_cosine_sums.size(), 0);
  EXPECT_EQ(a.sequences, 4);  // the rest merged as ever
}

}  // namespace
}  // namespace posgeom::testing
