#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Gemma against transformers' own model and outputs (tools/hf-goldens): norms scaling by
// 1 + w, embeddings times sqrt(d), GeGLU, head_dim 16, one key head for four query heads.
INSTANTIATE_TEST_SUITE_P(HfGemma, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gemma")), goldenCaseName);

model::ModelConfig gemmaConfig(const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir s;
  // The config alone: a changed head_dim would not fit the weights.
  return model::loadModelConfig(editedHfFixture(s.path(), "hf-gemma", edit));
}

// Gemma's released configs say "gelu" and mean the tanh form (transformers reads them so);
// head_dim is 256 when a config leaves it out, not hidden_size / heads.
TEST(Gemma, LegacyGeluIsTheTanhFormAndHeadDimDefaultsTo256) {
  EXPECT_EQ(gemmaConfig([](nlohmann::json&) {}).activation, "gelu_pytorch_tanh");
  EXPECT_EQ(gemmaConfig([](nlohmann::json& c) { c["hidden_act"] = "gelu"; }).activation, "gelu_pytorch_tanh");
  EXPECT_EQ(gemmaConfig([](nlohmann::json& c) { c["hidden_act"] = "relu"; }).activation, "relu");
  const auto c = gemmaConfig([](nlohmann::json& j) { j.erase("head_dim"); });
  EXPECT_EQ(c.headDim(), 256);
  EXPECT_TRUE(c.tie_word_embeddings);
}

}  // namespace
}  // namespace posgeom::testing
