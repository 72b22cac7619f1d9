#include "posgeom/anova/state_file.h"

#include "anova_fixtures.h"
#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(StateFile, RoundTripsEveryField) {
  ScratchDir s;
  anova::AnalysisState state;
  state.settings = {{"seq_len", 6}, {"shard", "0/2"}};
  state.windows = 5;
  auto stats = directStatistics(randomSequences(5, 6, 3, 5), 1, 2);
  stats.reservoir = Eigen::MatrixXd::Random(10, 3);
  stats.reservoir_windows = {0, 1};
  stats.previous_cosine_sum = 0.25;
  state.layers.push_back(stats);
  anova::saveState(state, s / "state.safetensors");
  const auto back = anova::loadState(s / "state.safetensors");
  EXPECT_EQ(back.settings, state.settings);
  EXPECT_EQ(back.windows, 5);
  ASSERT_EQ(back.layers.size(), 1u);
  const auto& l = back.layers[0];
  EXPECT_EQ(l.layer, 2);
  EXPECT_EQ(l.position_sum, stats.position_sum);
  EXPECT_EQ(l.second_moment, stats.second_moment);
  EXPECT_EQ(l.context_means, stats.context_means);
  EXPECT_EQ(l.context_labels, stats.context_labels);
  EXPECT_EQ(l.reservoir, stats.reservoir);
  EXPECT_EQ(l.norm_sum, stats.norm_sum);
  EXPECT_EQ(l.previous_cosine_sum, 0.25);
}

TEST(StateFile, OtherSafetensorsAreRejected) {
  POSGEOM_REQUIRE_SHARED("fixtures/golden/tiny-gpt2.safetensors");
  EXPECT_THROW(anova::loadState(sharedDir() / "fixtures/golden/tiny-gpt2.safetensors"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
