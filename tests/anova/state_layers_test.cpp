#include "posgeom/anova/state_layers.h"

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// The end stages see the same layers whether a run held them or they are read from its
// state file a layer at a time; a file's layer is read afresh at each ask and let go after.
TEST(StateLayers, InMemoryAndFromAFileAreTheSameLayers) {
  ScratchDir s;
  anova::AnalysisState state;
  for (int64_t layer : {0, 3}) state.layers.push_back(directStatistics(randomSequences(4, 5, 3, 11), 1, layer));
  state.layers[1].attention_input_sum = Eigen::MatrixXd::Random(5, 3);
  state.layers[1].attention_samples = Eigen::MatrixXd::Zero(5, 3);
  state.layers[1].attention_sample_windows = {0};
  anova::saveState(state, s / "state.safetensors");
  const anova::StateLayers held(state);
  const anova::StateLayers read(std::make_shared<const anova::StateReader>(s / "state.safetensors"));
  for (const auto* layers : {&held, &read}) {
    ASSERT_EQ(layers->size(), 2u);
    EXPECT_EQ(layers->index(1), 3);
    EXPECT_EQ(layers->shape(0).positions, 4);
    EXPECT_FALSE(layers->shape(0).attention_inputs);
    EXPECT_TRUE(layers->shape(1).attention_inputs);
    EXPECT_EQ(layers->find(3), std::optional<std::size_t>(1));
    EXPECT_EQ(layers->find(1), std::nullopt);
    expectSameStatistics(state.layers, {*layers->at(0), *layers->at(1)});
  }
  EXPECT_EQ(held.at(1).get(), &state.layers[1]);  // referred to, not copied
  EXPECT_NE(read.at(1).get(), read.at(1).get());  // each ask reads it
  EXPECT_TRUE(anova::StateLayers(std::vector<anova::LayerStatistics>{}).empty());
}

}  // namespace
}  // namespace posgeom::testing
