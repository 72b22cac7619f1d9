#include <functional>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// T5's encoder read from a full T5ForConditionalGeneration (decoder and head left out):
// four heads 16 wide (inner 64, d_model 48), ReLU MLP, 8 buckets out to distance 20.
// mT5's encoder model: the gated GELU MLP, three heads, 16 buckets out to 12. Against
// transformers' hidden states, final norm and attention (tools/hf-goldens).
INSTANTIATE_TEST_SUITE_P(HfT5, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-t5")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfMt5, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-mt5")), goldenCaseName);

TEST(T5, ConfigsSayTheirMlpBucketsAndScale) {
  const auto t5 = model::loadModelConfig(hfFixtureDir("hf-t5"));
  EXPECT_EQ(t5.headDim(), 16);
  EXPECT_FALSE(t5.gated_mlp);
  EXPECT_EQ(t5.activation, "relu");
  EXPECT_EQ(t5.relative_buckets, 8);
  EXPECT_EQ(t5.relative_max_distance, 20);
  EXPECT_EQ(t5.attention_scale, 1.0);
  EXPECT_TRUE(t5.bidirectional);
  EXPECT_EQ(model::describePositions(t5), "relative bias (8 buckets out to distance 20)");
  const auto mt5 = model::loadModelConfig(hfFixtureDir("hf-mt5"));
  EXPECT_TRUE(mt5.gated_mlp);
  EXPECT_EQ(mt5.activation, "gelu_new");  // "gated-gelu" is the tanh GELU in transformers
  EXPECT_EQ(mt5.relative_buckets, 16);
}

// Every (query, key) of the fixtures' windows falls in the bucket transformers'
// _relative_position_bucket gives it (recorded by tools/hf-goldens), and each head's term is
// block 0's table at that bucket, in every block.
TEST(T5, KernelTermsAreBlockZerosTableAtTransformersBuckets) {
  for (const char* name : {"hf-t5", "hf-mt5"}) {
    const auto dir = hfFixtureDir(name);
    const auto golden = io::SafetensorsFile::open(dir / "golden.safetensors");
    const auto buckets = model::tensorFromView(golden.get("relative_position_bucket"));
    const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
    const auto weights = io::SafetensorsFile::open(dir / "model.safetensors");
    const auto table = model::tensorFromView(weights.get("encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight"))
                           .to(at::kDouble);
    const int64_t t = buckets.size(0), heads = table.size(1);
    for (int64_t block = 0; block < loaded.model->config().num_layers; ++block) {
      const auto p = loaded.model->kernelPositions(block, t);
      ASSERT_EQ(static_cast<int64_t>(p.per_head.size()), heads) << name;
      EXPECT_FALSE(p.shared.mask.causal);
      EXPECT_EQ(p.shared.scale, 1.0);
      for (int64_t h = 0; h < heads; ++h)
        for (int64_t n = 0; n < t; ++n)
          for (int64_t i = 0; i < t; ++i) {
            const int64_t bucket = buckets[n][i].item<int64_t>();
            ASSERT_EQ(p.additive(h).table.bucket(n - i), bucket) << name << " query " << n << " key " << i;
            ASSERT_EQ(p.additive(h).at(n - i), table[bucket][h].item<double>()) << name << " head " << h;
          }
    }
  }
}

TEST(T5, OptionsPosgeomDoesNotReadAreRefusedByName) {
  const std::vector<std::pair<std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"is_decoder = true", [](nlohmann::json& j) { j["is_decoder"] = true; }},
      {"feed_forward_proj 'gated-gelu-new'", [](nlohmann::json& j) { j["feed_forward_proj"] = "gated-gelu-new"; }},
      {"feed_forward_proj 'double-gelu'", [](nlohmann::json& j) { j["feed_forward_proj"] = "double-gelu"; }},
      {"unsupported activation 'tanh' in feed_forward_proj", [](nlohmann::json& j) { j["feed_forward_proj"] = "gated-tanh"; }},
      {"relative_attention_num_buckets must be at least 4", [](nlohmann::json& j) { j["relative_attention_num_buckets"] = 3; }},
      {"relative_attention_max_distance must exceed the 2 distances",
       [](nlohmann::json& j) { j["relative_attention_max_distance"] = 2; }},
      {"d_kv", [](nlohmann::json& j) { j.erase("d_kv"); }},
  };
  for (const auto& [message, edit] : cases) {
    ScratchDir s;
    const auto error = inputErrorOf([&, &edit = edit] { model::loadModelConfig(editedHfFixture(s.path(), "hf-t5", edit)); });
    EXPECT_NE(error.find(message), std::string::npos) << message << " must be refused; got: " << error;
  }
}

// A random T5 writes a config that reads back as the model it was made from.
TEST(T5, AConfigFromSizesRoundTrips) {
  for (const char* type : {"t5", "mt5"}) {
    const auto& arch = model::architectureFor(type, "test");
    model::ModelShape shape;
    shape.layers = 2, shape.hidden_size = 48, shape.heads = 4, shape.vocab_size = 50, shape.max_positions = 32;
    const auto from_sizes = arch.config_for_shape(shape);
    const auto reread = arch.parse_config(io::JsonConfig(arch.to_config_json(from_sizes), "test"));
    EXPECT_EQ(reread.gated_mlp, from_sizes.gated_mlp) << type;
    EXPECT_EQ(reread.activation, from_sizes.activation) << type;
    EXPECT_EQ(reread.headDim(), 12) << type;
    EXPECT_EQ(reread.relative_buckets, 32) << type;
    EXPECT_EQ(reread.relative_max_distance, 128) << type;
    EXPECT_EQ(reread.positions, model::PositionScheme::kRelativeBias) << type;
  }
  EXPECT_TRUE(model::architectureFor("mt5", "test").config_for_shape({1, 48, 4, 0, 0, 50, 32}).gated_mlp);
}

}  // namespace
}  // namespace posgeom::testing
