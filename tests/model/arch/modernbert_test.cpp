#include <functional>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// ModernBERT against transformers' ModernBertForMaskedLM (tools/hf-goldens): blocks global,
// local, local with 4 keys a side in the local ones and RoPE bases 1000 / 100, no biases,
// tied decoder; and a two-block one with every bias and an untied decoder.
INSTANTIATE_TEST_SUITE_P(HfModernBert, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-modernbert")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfModernBertBiased, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-modernbert-biased")),
                         goldenCaseName);

TEST(ModernBert, LocalBlocksSeeHalfTheirWindowEachSideByTheirOwnRope) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-modernbert"));
  EXPECT_TRUE(c.bidirectional);
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{0, 5, 5}));  // |n - i| <= 8 / 2
  ASSERT_TRUE(c.local_rope.has_value());
  EXPECT_EQ(c.ropeFor(0).theta, 1000.0);
  EXPECT_EQ(c.ropeFor(1).theta, 100.0);
  EXPECT_FALSE(c.norm_bias);
  EXPECT_TRUE(c.decoder_bias);
  EXPECT_EQ(model::describePositions(c), "RoPE (base 100 in the blocks with a window, 1000 in the others)");
}

// The configs on the Hub before transformers 5: global_attn_every_n_layers, global_rope_theta
// and local_rope_theta in place of layer_types and rope_parameters.
TEST(ModernBert, TheHubsOlderKeysSayTheSame) {
  ScratchDir s;
  const auto older = model::loadModelConfig(editedHfFixture(s.path(), "hf-modernbert", [](nlohmann::json& j) {
    j.erase("layer_types");
    j.erase("rope_parameters");
    j["global_rope_theta"] = 1000.0;
    j["local_rope_theta"] = 100.0;
  }));
  const auto current = model::loadModelConfig(hfFixtureDir("hf-modernbert"));
  EXPECT_EQ(older.attention_windows, current.attention_windows);
  EXPECT_EQ(older.ropeFor(0).theta, current.ropeFor(0).theta);
  EXPECT_EQ(older.ropeFor(1).theta, current.ropeFor(1).theta);
  ScratchDir defaults;  // ModernBERT-base's: 160,000 and 10,000
  const auto base = model::loadModelConfig(editedHfFixture(defaults.path(), "hf-modernbert", [](nlohmann::json& j) {
    j.erase("layer_types");
    j.erase("rope_parameters");
  }));
  EXPECT_EQ(base.ropeFor(0).theta, 160000.0);
  EXPECT_EQ(base.ropeFor(1).theta, 10000.0);
}

TEST(ModernBert, OptionsItDoesNotRunAreRefusedByName) {
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"layer_types[1] is \"chunked_attention\"", [](nlohmann::json& j) { j["layer_types"][1] = "chunked_attention"; }},
      {"layer_types must list", [](nlohmann::json& j) { j["layer_types"] = {"full_attention"}; }},
      {"rope_scaling is not supported for modernbert",
       [](nlohmann::json& j) {
         j.erase("rope_parameters");
         j["rope_scaling"] = {{"rope_type", "linear"}, {"factor", 2.0}};
       }},
      {"classifier_activation 'relu' differs", [](nlohmann::json& j) { j["classifier_activation"] = "relu"; }},
      {"unsupported hidden_activation 'mish'", [](nlohmann::json& j) { j["hidden_activation"] = "mish"; }},
  };
  for (const auto& [message, edit] : cases) {
    ScratchDir s;
    const auto error = inputErrorOf([&, &edit = edit] { model::loadModelConfig(editedHfFixture(s.path(), "hf-modernbert", edit)); });
    EXPECT_NE(error.find(message), std::string::npos) << message << " must be refused; got: " << error;
  }
}

// A random ModernBERT's config reads back as the model it was made from.
TEST(ModernBert, AConfigFromSizesRoundTrips) {
  const auto& arch = model::architectureFor("modernbert", "test");
  model::ModelShape shape;
  shape.layers = 4, shape.hidden_size = 48, shape.heads = 4, shape.vocab_size = 50, shape.max_positions = 64;
  const auto from_sizes = arch.config_for_shape(shape);
  const auto reread = arch.parse_config(io::JsonConfig(arch.to_config_json(from_sizes), "test"));
  EXPECT_EQ(reread.attention_windows, (std::vector<int64_t>{0, 65, 65, 0}));
  EXPECT_EQ(reread.attention_windows, from_sizes.attention_windows);
  EXPECT_EQ(reread.ropeFor(1).theta, 10000.0);
  EXPECT_EQ(reread.ropeFor(0).theta, 160000.0);
  EXPECT_EQ(reread.norm_bias, from_sizes.norm_bias);
  EXPECT_TRUE(reread.bidirectional);
}

}  // namespace
}  // namespace posgeom::testing
