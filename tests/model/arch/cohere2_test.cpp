#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Cohere2 against transformers' own model and outputs (tools/hf-goldens): Cohere's parallel
// blocks, windows of 8 in three blocks of four with RoPE there only, the global blocks 3 and 7
// without any position (NoPE), logits times 0.25.
INSTANTIATE_TEST_SUITE_P(HfCohere2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-cohere2")), goldenCaseName);

TEST(Cohere2, GlobalBlocksAreNoPeAndTheOthersWindowed) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-cohere2"));
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{8, 8, 8, 0, 8, 8, 8, 0}));
  EXPECT_TRUE(c.rotates(0));
  EXPECT_FALSE(c.rotates(3));
  EXPECT_FALSE(c.rotates(7));
  EXPECT_TRUE(c.rope.interleaved);
  EXPECT_EQ(c.logit_divisor, 4.0);
  // The Hub's older configs: sliding_window_pattern in place of layer_types.
  ScratchDir s;
  const auto older = model::loadModelConfig(editedHfFixture(s.path(), "hf-cohere2", [](nlohmann::json& j) {
    j.erase("layer_types");
    j["sliding_window_pattern"] = 2;
  }));
  EXPECT_EQ(older.attention_windows, (std::vector<int64_t>{8, 0, 8, 0, 8, 0, 8, 0}));
  EXPECT_FALSE(older.rotates(1));
}

}  // namespace
}  // namespace posgeom::testing
