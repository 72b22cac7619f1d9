#include <cmath>
#include <functional>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// MPT against transformers' own model and outputs (tools/hf-goldens): six heads (MPT's
// slopes for a head count that is not a power of two), q, k and v clamped to 0.5, logits
// scaled by softmax_scale 0.5, bias-free LayerNorms and maps, a tied head.
INSTANTIATE_TEST_SUITE_P(HfMpt, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-mpt")), goldenCaseName);

// MPT's slopes from their definition: 2^(-8k/8) for k = 1..8, odd-numbered first.
TEST(Mpt, SlopesForSixHeadsAreMptsNotBlooms) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-mpt"), model::Numerics::parse("float32", "cpu"));
  const auto& c = loaded.model->config();
  const std::vector<double> expected = {std::pow(2.0, -2), std::pow(2.0, -4), std::pow(2.0, -6),
                                        std::pow(2.0, -8), std::pow(2.0, -1), std::pow(2.0, -3)};
  EXPECT_EQ(c.alibi_slopes, expected);
  const auto slopes = loaded.model->alibiSlopes().to(at::kDouble);
  ASSERT_EQ(slopes.numel(), 6);
  for (int64_t h = 0; h < 6; ++h) EXPECT_EQ(slopes[h].item<double>(), expected[static_cast<size_t>(h)]) << h;
  EXPECT_EQ(c.qkv_clip, 0.5);
  EXPECT_EQ(c.attention_scale, 0.5);
  EXPECT_EQ(c.intermediate_size, 4 * c.hidden_size);
  EXPECT_EQ(c.activation, "gelu");
}

// A config written for a random model reads back as the slopes it was written from.
TEST(Mpt, AConfigFromSizesRoundTripsItsSlopes) {
  const auto& arch = model::architectureFor("mpt", "test");
  model::ModelShape shape;
  shape.layers = 1, shape.hidden_size = 48, shape.heads = 12, shape.vocab_size = 50, shape.max_positions = 32;
  const auto from_sizes = arch.config_for_shape(shape);
  ASSERT_EQ(from_sizes.alibi_slopes.size(), 12u);
  EXPECT_EQ(from_sizes.alibi_slopes[0], std::pow(2.0, -1.0));  // p = 16: 2^(-8 * 2 / 16) first
  const auto reread = arch.parse_config(io::JsonConfig(arch.to_config_json(from_sizes), "test"));
  EXPECT_EQ(reread.alibi_slopes, from_sizes.alibi_slopes);
}

TEST(Mpt, OptionsTransformersDoesNotRunAreRefusedByName) {
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"attn_config must be an object", [](nlohmann::json& j) { j["attn_config"] = 5; }},
      {"attn_config.attn_type", [](nlohmann::json& j) { j["attn_config"]["attn_type"] = "grouped_query_attention"; }},
      {"attn_config.qk_ln", [](nlohmann::json& j) { j["attn_config"]["qk_ln"] = true; }},
      {"attn_config.alibi", [](nlohmann::json& j) { j["attn_config"]["alibi"] = false; }},
      {"attn_config.alibi_bias_max", [](nlohmann::json& j) { j["attn_config"]["alibi_bias_max"] = 4; }},
      {"attn_config.clip_qkv", [](nlohmann::json& j) { j["attn_config"]["clip_qkv"] = -1; }},
      {"attn_config.softmax_scale", [](nlohmann::json& j) { j["attn_config"]["softmax_scale"] = 0; }},
      {"no_bias", [](nlohmann::json& j) { j["no_bias"] = false; }},
      {"expansion_ratio", [](nlohmann::json& j) { j["expansion_ratio"] = 2; }},
      {"logit_scale", [](nlohmann::json& j) { j["logit_scale"] = 0.5; }},
  };
  for (const auto& [key, edit] : cases) {
    ScratchDir s;
    const auto error = inputErrorOf([&, &edit = edit] { model::loadModelConfig(editedHfFixture(s.path(), "hf-mpt", edit)); });
    EXPECT_NE(error.find(key), std::string::npos) << key << " must be refused; got: " << error;
  }
}

}  // namespace
}  // namespace posgeom::testing
