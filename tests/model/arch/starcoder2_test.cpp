#include <algorithm>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Starcoder2 against transformers' own model and outputs (tools/hf-goldens): LayerNorms, a
// dense tanh-GELU MLP, biases on every map, two key/value heads for four query heads, a
// window of 8 keys in every layer, the head tied.
INSTANTIATE_TEST_SUITE_P(HfStarcoder2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-starcoder2")), goldenCaseName);

TEST(Starcoder2, BiasesWindowsAndTheHeadFollowTheConfig) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-starcoder2"));
  EXPECT_TRUE(given.attention_bias);
  EXPECT_TRUE(given.mlp_bias);
  EXPECT_TRUE(given.tie_word_embeddings);
  EXPECT_EQ(given.activation, "gelu_pytorch_tanh");
  EXPECT_EQ(given.attention_windows, (std::vector<int64_t>{8, 8}));
  ScratchDir s;
  const auto plain = model::loadModelConfig(editedHfFixture(s.path(), "hf-starcoder2", [](nlohmann::json& j) {
    j["use_bias"] = false;
    j["sliding_window"] = nullptr;
  }));
  EXPECT_FALSE(plain.attention_bias);
  EXPECT_FALSE(plain.mlp_bias);
  EXPECT_TRUE(plain.attention_windows.empty());
  std::vector<std::string> names;
  for (const auto& spec : model::architectureFor("starcoder2", "test").tensors(plain)) names.push_back(spec.name);
  for (const auto& name : names) {  // the norms' biases only
    if (name.find(".bias") != std::string::npos) {
      EXPECT_NE(name.find("norm.bias"), std::string::npos) << name;
    }
  }
  EXPECT_NE(std::find(names.begin(), names.end(), "layers.0.mlp.c_fc.weight"), names.end());
}

}  // namespace
}  // namespace posgeom::testing
