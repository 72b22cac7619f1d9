#include <cmath>

#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// DeepSeek against transformers' own models and outputs (tools/hf-goldens): V3 with a query
// latent, interleaved rotary pairs, YaRN whose mscale_all_dim scales the logits, biases, a
// dense block 0 and sigmoid routing by groups with the correction bias; V3 without a query
// latent or interleaving, one group, every block sparse; V2-Lite's shape (no query latent,
// RoPE turned in float32, greedy softmax routing); V2 with a query latent, group-limited
// greedy routing and YaRN.
INSTANTIATE_TEST_SUITE_P(HfDeepseekV3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-deepseek-v3")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfDeepseekV3Plain, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-deepseek-v3-plain")),
                         goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfDeepseekV2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-deepseek-v2")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfDeepseekV2Grouped, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-deepseek-v2-grouped")),
                         goldenCaseName);

// The sizes and routing as the fixture's config.json gives them, and the logit scale from
// its definition: (nope + rope)^-1/2 (0.1 mscale_all_dim ln factor + 1)^2.
TEST(Deepseek, ReadsTheLatentShapesAndRouting) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-deepseek-v3"));
  EXPECT_EQ(c.latent.q_rank, 24);
  EXPECT_EQ(c.latent.kv_rank, 16);
  EXPECT_EQ(c.headDim(), 20);
  EXPECT_EQ(c.latent.value_dims, 10);
  EXPECT_TRUE(c.rope.interleaved);
  const double mscale = 0.1 * 0.8 * std::log(4.0) + 1.0;
  EXPECT_NEAR(c.attention_scale, mscale * mscale / std::sqrt(20.0), 1e-15);
  EXPECT_TRUE(c.moe.sigmoid_scores);
  EXPECT_EQ(c.moe.groups, 4);
  EXPECT_EQ(c.moe.top_groups, 2);
  EXPECT_EQ(c.moe.routed_scale, 2.5);
  EXPECT_FALSE(c.moe.sparse(0));
  EXPECT_TRUE(c.moe.sparse(1));
  EXPECT_EQ(c.moe.shared_expert_size, 24);
  const auto v2 = model::loadModelConfig(hfFixtureDir("hf-deepseek-v2"));
  EXPECT_EQ(v2.latent.q_rank, 0);
  EXPECT_TRUE(v2.latent.float32_rope);
  EXPECT_FALSE(v2.moe.sigmoid_scores);
  EXPECT_FALSE(v2.moe.normalize_top_k);  // V2's router never renormalises, whatever norm_topk_prob says
  EXPECT_EQ(v2.moe.groups, 1);
  EXPECT_EQ(v2.attention_scale, 0);  // default RoPE: 1 / sqrt(20)
  EXPECT_EQ(v2.moe.shared_expert_size, 48);
}

struct Refusal {
  const char* name;
  const char* fixture;
  std::function<void(nlohmann::json&)> edit;
  const char* says;
};

class DeepseekRefusal : public ::testing::TestWithParam<Refusal> {};

// Each a config.json a user could have; each refused with one line naming the key.
TEST_P(DeepseekRefusal, NamesTheKey) {
  ScratchDir s;
  const auto& r = GetParam();
  const auto dir = editedHfFixture(s.path(), r.fixture, r.edit);
  const auto message = inputErrorOf([&] { model::loadModelConfig(dir); });
  EXPECT_NE(message.find("config.json"), std::string::npos) << message;
  EXPECT_NE(message.find(r.says), std::string::npos) << message;
}

INSTANTIATE_TEST_SUITE_P(
    Configs, DeepseekRefusal,
    ::testing::Values(
        Refusal{"fp8", "hf-deepseek-v3", [](nlohmann::json& j) { j["quantization_config"] = {{"quant_method", "fp8"}}; },
                "quantization_config is not supported"},
        Refusal{"kv_heads", "hf-deepseek-v3", [](nlohmann::json& j) { j["num_key_value_heads"] = 2; },
                "num_key_value_heads (2) must equal num_attention_heads (4)"},
        Refusal{"odd_rope", "hf-deepseek-v3", [](nlohmann::json& j) { j["qk_rope_head_dim"] = 7; }, "qk_rope_head_dim must be even"},
        Refusal{"groups", "hf-deepseek-v3", [](nlohmann::json& j) { j["n_group"] = 3; }, "n_group (3) must divide n_routed_experts (8)"},
        Refusal{"top_groups", "hf-deepseek-v3", [](nlohmann::json& j) { j["topk_group"] = 5; }, "topk_group (5) is more than n_group (4)"},
        Refusal{"per_token", "hf-deepseek-v3", [](nlohmann::json& j) { j["num_experts_per_tok"] = 5; },
                "num_experts_per_tok (5) is more than the 4 experts of the topk_group groups"},
        Refusal{"method", "hf-deepseek-v2", [](nlohmann::json& j) { j["topk_method"] = "noaux_tc"; },
                "topk_method 'noaux_tc' is not supported for deepseek_v2"},
        Refusal{"dense", "hf-deepseek-v2", [](nlohmann::json& j) { j["first_k_dense_replace"] = -1; },
                "first_k_dense_replace must be a whole number >= 0"}),
    [](const ::testing::TestParamInfo<Refusal>& case_info) { return std::string(case_info.param.name); });

}  // namespace
}  // namespace posgeom::testing
