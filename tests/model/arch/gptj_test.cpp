#include "golden.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/ops.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// GPT-J against transformers' own model and outputs (tools/hf-goldens): interleaved pairs
// turning on the first 8 dims of each 16-wide head, attention and MLP in parallel.
INSTANTIATE_TEST_SUITE_P(HfGptJ, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gptj")), goldenCaseName);

TEST(GptJ, RotaryDimIsAPartialInterleavedRotation) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-gptj"), model::Numerics::parse("float32", "cpu"));
  const auto& rope = loaded.model->config().rope;
  EXPECT_TRUE(rope.interleaved);
  EXPECT_EQ(rope.partial_rotary_factor, 0.5);
  EXPECT_TRUE(loaded.model->kernelPositions(0, 24).shared.rope.interleaved());
  EXPECT_EQ(loaded.model->kernelPositions(0, 24).shared.rope.inverse_frequencies.size(), 4u);
}

// rotate_every_two: pair (2j, 2j + 1) turns by t x frequency j, the rest passes.
TEST(GptJ, InterleavedPairsTurnTogether) {
  const auto num = model::Numerics::parse("float32", "cpu");
  const auto tables = model::ops::rotaryTables(3, {1.0, 0.5}, num, /*interleaved=*/true);
  const auto x = at::tensor({1.0f, 0.0f, 0.0f, 1.0f, 7.0f}).view({1, 1, 1, 5}).expand({1, 1, 3, 5});
  const auto y = model::ops::applyRotary(x, tables);
  EXPECT_NEAR(y[0][0][2][0].item<float>(), std::cos(2.0f), 1e-6);   // (1, 0) turned by 2
  EXPECT_NEAR(y[0][0][2][1].item<float>(), std::sin(2.0f), 1e-6);
  EXPECT_NEAR(y[0][0][2][2].item<float>(), -std::sin(1.0f), 1e-6);  // (0, 1) turned by 1
  EXPECT_NEAR(y[0][0][2][3].item<float>(), std::cos(1.0f), 1e-6);
  EXPECT_EQ(y[0][0][2][4].item<float>(), 7.0f);
}

}  // namespace
}  // namespace posgeom::testing
