#include <cmath>

#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Granite against transformers' own model and outputs (tools/hf-goldens): every constant
// factor away from 1 (embeddings x 3, attention logits x 0.2, block outputs x 0.5 into the
// residual stream, logits / 4), so that each one missing or misplaced moves the numbers.
INSTANTIATE_TEST_SUITE_P(HfGranite, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-granite")), goldenCaseName);

TEST(Granite, ItsFactorsAreReadAndTransformersDefaultsAreOne) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-granite"));
  EXPECT_EQ(given.embedding_multiplier, 3.0);
  EXPECT_EQ(given.attention_scale, 0.2);
  EXPECT_EQ(given.residual_multiplier, 0.5);
  EXPECT_EQ(given.logit_divisor, 4.0);
  ScratchDir s;
  const auto absent = model::loadModelConfig(editedHfFixture(s.path(), "hf-granite", [](nlohmann::json& j) {
    for (const char* key : {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"}) j.erase(key);
  }));
  EXPECT_EQ(absent.embedding_multiplier, 1.0);
  EXPECT_EQ(absent.attention_scale, 1.0);  // not 1/sqrt(head_dim): transformers' default
  EXPECT_EQ(absent.residual_multiplier, 1.0);
  EXPECT_EQ(absent.logit_divisor, 1.0);
}

TEST(Granite, AFactorThatIsNotPositiveIsRefusedByKey) {
  for (const char* key : {"embedding_multiplier", "attention_multiplier", "residual_multiplier", "logits_scaling"}) {
    ScratchDir s;
    try {
      model::loadModelConfig(editedHfFixture(s.path(), "hf-granite", [key](nlohmann::json& j) { j[key] = 0; }));
      ADD_FAILURE() << key << " = 0 must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

// A random Granite (random-model --arch granite) writes the logit scale its shape implies,
// under Granite's own key, and reads back the same config.
TEST(Granite, ARandomModelsConfigNamesItsLogitScale) {
  const auto& arch = model::architectureFor("granite", "test");
  model::ModelShape shape;
  shape.layers = 2, shape.hidden_size = 64, shape.heads = 4, shape.kv_heads = 2, shape.intermediate_size = 96;
  shape.vocab_size = 50, shape.max_positions = 32;
  auto config = arch.config_for_shape(shape);
  config.model_type = "granite";
  const auto json = arch.to_config_json(config);
  EXPECT_FALSE(json.contains("query_pre_attn_scalar"));
  EXPECT_DOUBLE_EQ(json.at("attention_multiplier").get<double>(), 1.0 / std::sqrt(16.0));
  const auto read = arch.parse_config(io::JsonConfig(json, "granite config"));
  EXPECT_DOUBLE_EQ(read.attention_scale, 0.25);
  EXPECT_EQ(read.residual_multiplier, 1.0);
}

}  // namespace
}  // namespace posgeom::testing
