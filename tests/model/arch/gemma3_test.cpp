#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Gemma-3 (text) against transformers' own model and outputs (tools/hf-goldens): blocks
// local, global, local, the local ones with a window of 8 and RoPE base 100, the global one
// base 10,000 linearly scaled by 2; per-head q/k norms (1 + w), sandwich norms, logits times
// 20^-1/2, no caps.
INSTANTIATE_TEST_SUITE_P(HfGemma3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gemma3")), goldenCaseName);

TEST(Gemma3, WindowedBlocksTurnByTheirOwnRope) {
  const auto config = model::loadModelConfig(hfFixtureDir("hf-gemma3"));
  EXPECT_EQ(config.attention_windows, (std::vector<int64_t>{8, 0, 8}));
  ASSERT_TRUE(config.local_rope.has_value());
  EXPECT_EQ(config.ropeFor(0).theta, 100.0);
  EXPECT_EQ(config.ropeFor(0).type, "default");
  EXPECT_EQ(config.ropeFor(1).theta, 10000.0);
  EXPECT_EQ(config.ropeFor(1).type, "linear");
  EXPECT_EQ(config.ropeFor(1).factor, 2.0);
  EXPECT_EQ(config.attention_logit_cap, 0.0);
  EXPECT_EQ(config.final_logit_cap, 0.0);
  EXPECT_EQ(model::describePositions(config), "RoPE (base 100 in the blocks with a window, 10000 in the others)");
}

// The configs on the Hub before transformers 5: rope_theta and rope_scaling for the global
// blocks, rope_local_base_freq for the others, sliding_window_pattern for which is which.
TEST(Gemma3, TheHubsOlderKeysSayTheSame) {
  ScratchDir s;
  const auto config = model::loadModelConfig(editedHfFixture(s.path(), "hf-gemma3", [](nlohmann::json& j) {
    j.erase("rope_parameters");
    j.erase("layer_types");
    j["rope_theta"] = 10000.0;
    j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
    j["rope_local_base_freq"] = 100.0;
    j["sliding_window_pattern"] = 2;
  }));
  EXPECT_EQ(config.attention_windows, (std::vector<int64_t>{8, 0, 8}));
  EXPECT_EQ(config.ropeFor(2).theta, 100.0);
  EXPECT_EQ(config.ropeFor(1).factor, 2.0);
  ScratchDir t;
  const auto defaults = model::loadModelConfig(editedHfFixture(t.path(), "hf-gemma3", [](nlohmann::json& j) {
    j.erase("rope_parameters");
  }));
  EXPECT_EQ(defaults.ropeFor(0).theta, 10000.0);
  EXPECT_EQ(defaults.ropeFor(1).theta, 1e6);
}

TEST(Gemma3, BidirectionalAttentionIsRefusedByName) {
  ScratchDir s;
  const auto refusal = inputErrorOf([&] {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-gemma3", [](nlohmann::json& j) { j["use_bidirectional_attention"] = true; }));
  });
  EXPECT_NE(refusal.find("use_bidirectional_attention = true (EmbeddingGemma) is not supported"), std::string::npos) << refusal;
}

}  // namespace
}  // namespace posgeom::testing
