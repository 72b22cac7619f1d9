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
  EXPECT_EQ(model::describePositions(config), "RoPE (base 100 in the blocks with a window, 10000 with linear scaling in the others)");
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

// The multimodal checkpoint's language model (Gemma3ForConditionalGeneration, a one-layer
// vision tower beside it): hf-gemma3's shape under text_config and language_model.model.
INSTANTIATE_TEST_SUITE_P(HfGemma3Multimodal, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gemma3-multimodal")),
                         goldenCaseName);

TEST(Gemma3, AMultimodalConfigIsItsTextConfigWithTransformersDefaults) {
  const auto full = model::loadModelConfig(hfFixtureDir("hf-gemma3-multimodal"));
  EXPECT_EQ(full.model_type, "gemma3");
  EXPECT_EQ(full.num_layers, 3);
  EXPECT_EQ(full.attention_windows, (std::vector<int64_t>{8, 0, 8}));
  EXPECT_EQ(full.ropeFor(0).theta, 100.0);
  // The Hub's gemma-3-4b text_config gives only what differs from Gemma3TextConfig's.
  ScratchDir s;
  const auto hub = model::loadModelConfig(editedHfFixture(s.path(), "hf-gemma3-multimodal", [](nlohmann::json& j) {
    j["text_config"] = {{"hidden_size", 2560}, {"intermediate_size", 10240}, {"model_type", "gemma3_text"},
                        {"num_hidden_layers", 34}, {"rope_scaling", {{"factor", 8.0}, {"rope_type", "linear"}}},
                        {"sliding_window", 1024}};
  }));
  EXPECT_EQ(hub.vocab_size, 262208);
  EXPECT_EQ(hub.num_heads, 8);
  EXPECT_EQ(hub.num_kv_heads, 4);
  EXPECT_EQ(hub.headDim(), 256);
  EXPECT_EQ(hub.attentionWindow(0), 1024);
  EXPECT_EQ(hub.attentionWindow(5), 0);  // every sixth block global
  EXPECT_EQ(hub.ropeFor(5).factor, 8.0);
  EXPECT_EQ(hub.ropeFor(5).theta, 1e6);
  EXPECT_EQ(hub.ropeFor(0).theta, 10000.0);
  ScratchDir t;
  const auto refusal = inputErrorOf([&] {
    model::loadModelConfig(editedHfFixture(t.path(), "hf-gemma3-multimodal", [](nlohmann::json& j) { j.erase("text_config"); }));
  });
  EXPECT_NE(refusal.find("text_config must be an object"), std::string::npos) << refusal;
}

// A random multimodal Gemma-3's config (the language model alone) reads back as it was made.
TEST(Gemma3, AMultimodalConfigFromSizesRoundTrips) {
  const auto& arch = model::architectureFor("gemma3", "test");
  model::ModelShape shape;
  shape.layers = 6, shape.hidden_size = 64, shape.heads = 4, shape.kv_heads = 2, shape.vocab_size = 50, shape.max_positions = 32;
  const auto from_sizes = arch.config_for_shape(shape);
  const auto json = arch.to_config_json(from_sizes);
  EXPECT_EQ(json["text_config"]["model_type"], "gemma3_text");
  const auto reread = arch.parse_config(io::JsonConfig(json, "test"));
  // The same model as the text family reads from text_config alone.
  const auto text = model::architectureFor("gemma3_text", "test").parse_config(io::JsonConfig(json["text_config"], "test"));
  EXPECT_EQ(reread.attention_windows, text.attention_windows);
  EXPECT_EQ(reread.attention_windows, (std::vector<int64_t>{4096, 4096, 4096, 4096, 4096, 0}));
  EXPECT_EQ(reread.num_kv_heads, 2);
  EXPECT_EQ(reread.vocab_size, 50);
}

}  // namespace
}  // namespace posgeom::testing
