#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Qwen3-MoE against transformers' own model and outputs (tools/hf-goldens): per-head q/k
// norms, head_dim 16, a mixture of 4 experts of 32 in every block, 2 a token, renormalised.
INSTANTIATE_TEST_SUITE_P(HfQwen3Moe, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-qwen3-moe")), goldenCaseName);

TEST(Qwen3Moe, RenormalisesOnlyWhenTheConfigSaysAndSlidesOnlyWhenAsked) {
  const auto config = model::loadModelConfig(hfFixtureDir("hf-qwen3-moe"));
  EXPECT_TRUE(config.moe.normalize_top_k);
  EXPECT_EQ(config.moe.shared_expert_size, 0);
  EXPECT_TRUE(config.attention_windows.empty());
  ScratchDir s;
  const auto edited = model::loadModelConfig(editedHfFixture(s.path(), "hf-qwen3-moe", [](nlohmann::json& j) {
    j.erase("norm_topk_prob");  // transformers' default: false
    j["use_sliding_window"] = true;
    j["sliding_window"] = 8;
  }));
  EXPECT_FALSE(edited.moe.normalize_top_k);
  EXPECT_EQ(edited.attention_windows, (std::vector<int64_t>{8, 8}));
}

}  // namespace
}  // namespace posgeom::testing
