#include "rope_config.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

model::RopeConfig ropeOf(const std::string& json) {
  ScratchDir s;
  writeFile(s / "config.json", json);
  return model::readRopeConfig(io::JsonConfig::load(s / "config.json"));
}

// Both config formats: transformers 5's rope_parameters, and the earlier top-level keys
// with rope_scaling ("type" or "rope_type").
TEST(RopeConfig, ReadsBothFormats) {
  const auto v5 = ropeOf(R"({"rope_parameters": {"rope_theta": 500000.0, "rope_type": "llama3", "factor": 8.0,
      "low_freq_factor": 1.0, "high_freq_factor": 4.0, "original_max_position_embeddings": 8192}})");
  EXPECT_EQ(v5.theta, 500000.0);
  EXPECT_EQ(v5.type, "llama3");
  EXPECT_EQ(v5.original_max_positions, 8192);
  const auto v4 = ropeOf(R"({"rope_theta": 1000.0, "partial_rotary_factor": 0.5, "rope_scaling": {"type": "linear", "factor": 2.0}})");
  EXPECT_EQ(v4.theta, 1000.0);
  EXPECT_EQ(v4.type, "linear");
  EXPECT_EQ(v4.factor, 2.0);
  EXPECT_EQ(v4.partial_rotary_factor, 0.5);
  const auto plain = ropeOf(R"({"rope_scaling": null})");
  EXPECT_EQ(plain.type, "default");
  EXPECT_EQ(plain.theta, 10000.0);
  // A stale top-level rope_theta beside rope_parameters is not the one in use.
  EXPECT_EQ(ropeOf(R"({"rope_theta": 0, "rope_parameters": {"rope_theta": 500.0, "rope_type": "default"}})").theta, 500.0);
}

// YaRN as transformers reads it: the context from the config's original_max_position_embeddings,
// else the scaling's, else max_position_embeddings; the factor, else their ratio; the
// attention factor given, or 0.1 ln(factor) + 1, or the ratio of mscale's to mscale_all_dim's;
// beta_fast 32 and beta_slow 1 where absent, null or 0 (transformers reads them with `or`).
TEST(RopeConfig, ReadsYarnAsTransformersDoes) {
  const auto plain = ropeOf(R"({"max_position_embeddings": 131072, "rope_parameters": {"rope_theta": 1e6, "rope_type": "yarn",
      "factor": 4.0, "original_max_position_embeddings": 32768}})");
  EXPECT_EQ(plain.type, "yarn");
  EXPECT_EQ(plain.original_max_positions, 32768);
  EXPECT_DOUBLE_EQ(plain.attention_factor, 0.1 * std::log(4.0) + 1);
  EXPECT_EQ(plain.beta_fast, 32.0);
  EXPECT_EQ(plain.beta_slow, 1.0);
  EXPECT_TRUE(plain.truncate);
  // DeepSeek's: no factor given, mscale and mscale_all_dim, betas of its own.
  const auto deepseek = ropeOf(R"({"max_position_embeddings": 163840, "rope_scaling": {"type": "yarn", "factor": null,
      "original_max_position_embeddings": 4096, "mscale": 0.707, "mscale_all_dim": 0.707, "beta_fast": 32, "beta_slow": 1}})");
  EXPECT_EQ(deepseek.factor, 40.0);
  EXPECT_DOUBLE_EQ(deepseek.attention_factor, 1.0);
  const auto skewed = ropeOf(R"({"max_position_embeddings": 64, "rope_parameters": {"rope_theta": 100.0, "rope_type": "yarn",
      "factor": 8.0, "mscale": 1.0, "mscale_all_dim": 0.5, "beta_fast": 0, "beta_slow": 2.0, "truncate": false,
      "attention_factor": null}})");
  EXPECT_EQ(skewed.original_max_positions, 64);
  EXPECT_DOUBLE_EQ(skewed.attention_factor, (0.1 * std::log(8.0) + 1) / (0.05 * std::log(8.0) + 1));
  EXPECT_EQ(skewed.beta_fast, 32.0);
  EXPECT_EQ(skewed.beta_slow, 2.0);
  EXPECT_FALSE(skewed.truncate);
  // Phi-3's place for the context wins over the scaling's; a given attention factor is kept.
  const auto phi = ropeOf(R"({"original_max_position_embeddings": 4096, "max_position_embeddings": 131072,
      "rope_scaling": {"rope_type": "yarn", "factor": 32.0, "original_max_position_embeddings": 2048, "attention_factor": 1.2}})");
  EXPECT_EQ(phi.original_max_positions, 4096);
  EXPECT_EQ(phi.attention_factor, 1.2);
}

// transformers 5's RoPE per layer type (Gemma-3): the full-attention blocks' is the model's,
// each other type's read on its own.
TEST(RopeConfig, ReadsRopeGivenPerLayerType) {
  ScratchDir s;
  writeFile(s / "config.json", R"({"rope_parameters": {"full_attention": {"rope_theta": 1e6, "rope_type": "linear", "factor": 8.0},
      "sliding_attention": {"rope_theta": 10000.0, "rope_type": "default"}}})");
  const auto config = io::JsonConfig::load(s / "config.json");
  const auto full = model::readRopeConfig(config);
  EXPECT_EQ(full.theta, 1e6);
  EXPECT_EQ(full.factor, 8.0);
  const auto sliding = model::readLayerTypeRope(config, "sliding_attention");
  ASSERT_TRUE(sliding.has_value());
  EXPECT_EQ(sliding->theta, 10000.0);
  EXPECT_EQ(sliding->type, "default");
  EXPECT_FALSE(model::readLayerTypeRope(config, "chunked_attention").has_value());
}

TEST(RopeConfig, RefusesWhatItDoesNotReadByName) {
  for (const auto& [json, message] : std::vector<std::pair<std::string, std::string>>{
           {R"({"rope_scaling": {"rope_type": "mrope", "factor": 4.0}})", "RoPE of type 'mrope'"},
           {R"({"rope_scaling": {"rope_type": "longrope", "factor": 4.0}, "max_position_embeddings": 8})", "longrope needs short_factor"},
           {R"({"rope_scaling": {"rope_type": "longrope", "short_factor": [1.0], "long_factor": [0.0]}, "max_position_embeddings": 8})",
            "rope_scaling.long_factor[0] must be a positive number"},
           {R"({"rope_scaling": {"rope_type": "yarn", "factor": 4.0}})", "yarn needs original_max_position_embeddings"},
           {R"({"rope_parameters": {"rope_theta": 1.0, "rope_type": "yarn", "factor": 2.0, "truncate": 1}, "max_position_embeddings": 8})",
            "rope_parameters.truncate must be true or false"},
           {R"({"rope_parameters": {"sliding_attention": {"rope_theta": 10.0}}})", "has no object for full_attention"},
           {R"({"rope_parameters": {"rope_theta": 10000.0, "rope_type": "dynamic"}})", "rope_parameters.factor must be a positive number"},
           {R"({"rope_theta": -1})", "rope_theta must be a positive number"},
           {R"({"rope_theta": 0})", "rope_theta must be a positive number"},
           // Positive, but its inverse powers overflow float32: NaN rotations.
           {R"({"rope_theta": 1e-320})", "rope_theta is 1e-320, below float32's smallest normal"},
           {R"({"rope_parameters": {"rope_theta": 1e-320, "rope_type": "default"}})", "rope_parameters.rope_theta is"},
           {R"({"rope_scaling": {"type": "linear", "factor": 1e-300}})", "rope_scaling.factor is 1e-300, below"},
           // transformers fails on a scaling without a type; the factor was dropped silently.
           {R"({"rope_scaling": {"factor": 2.0}})", "rope_scaling gives a factor but no rope_type"},
           {R"({"rope_parameters": {"rope_theta": 10000.0, "factor": 2.0}})", "rope_parameters gives a factor but no rope_type"}}) {
    try {
      ropeOf(json);
      ADD_FAILURE() << json;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  }
}

// A family's own default factor stands where the config gives none, in either place.
TEST(RopeConfig, AFamilysDefaultFactorOnlyWhereNoneIsGiven) {
  model::ModelConfig m;
  m.hidden_size = 48, m.num_heads = 3;  // head_dim 16
  for (const auto& [json, expected] : std::vector<std::pair<nlohmann::json, double>>{
           {nlohmann::json::object(), 0.25},
           {{{"partial_rotary_factor", 0.5}}, 0.5},
           {{{"rope_parameters", {{"partial_rotary_factor", 0.5}}}}, 0.5}}) {
    const io::JsonConfig c(json, "config.json");
    m.rope = model::RopeConfig();
    m.rope.partial_rotary_factor = json.empty() ? 1.0 : 0.5;  // as readRopeConfig has read it
    model::partialRotaryFactorOr(c, m, 0.25);
    EXPECT_EQ(m.rope.partial_rotary_factor, expected) << json.dump();
  }
  m.num_heads = 4;  // head_dim 12: a quarter is 3 dims
  EXPECT_THROW(model::partialRotaryFactorOr(io::JsonConfig(nlohmann::json::object(), "config.json"), m, 0.25), InputError);
}

// The turned dims are head_dim x factor truncated, as transformers takes them; an odd or
// zero count is refused naming the key the family reads the factor from.
TEST(RopeConfig, TheTurnedDimsMustBeAPositiveEvenCount) {
  model::ModelConfig m;
  m.hidden_size = 48, m.num_heads = 4;  // head_dim 12
  const io::JsonConfig c(nlohmann::json::object(), "config.json");
  m.rope.partial_rotary_factor = 0.5;
  EXPECT_EQ(model::requireEvenRotaryDims(c, m, "partial_rotary_factor"), 6);
  m.rope.partial_rotary_factor = 0.7;  // 8.4 -> 8
  EXPECT_EQ(model::requireEvenRotaryDims(c, m, "partial_rotary_factor"), 8);
  for (const double odd : {0.25, 0.1}) {  // 3 dims; 1 dim
    m.rope.partial_rotary_factor = odd;
    try {
      model::requireEvenRotaryDims(c, m, "rotary_pct");
      ADD_FAILURE() << odd << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("rotary_pct must turn an even number"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace posgeom::testing
