#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// GPT-Neo against transformers' own model and outputs (tools/hf-goldens): a global and a
// local layer (8 keys), logits not scaled.
INSTANTIATE_TEST_SUITE_P(HfGptNeo, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gpt-neo")), goldenCaseName);

model::ModelConfig neoConfig(const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir s;
  return model::loadModelConfig(editedHfFixture(s.path(), "hf-gpt-neo", edit));
}

TEST(GptNeo, AttentionTypesExpandToOneWindowPerLayer) {
  const auto c = neoConfig([](nlohmann::json&) {});
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{0, 8}));
  EXPECT_EQ(c.attention_scale, 1.0);
  const auto swapped = neoConfig([](nlohmann::json& j) { j["attention_types"] = {{{"local"}, 2}}; });
  EXPECT_EQ(swapped.attention_windows, (std::vector<int64_t>{8, 8}));
  try {
    neoConfig([](nlohmann::json& j) { j["attention_types"] = {{{"local"}, 3}}; });
    FAIL() << "three types for two layers must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("attention_types gives 3 layers"), std::string::npos) << e.what();
  }
}

std::string neoError(const nlohmann::json& config) {
  try {
    model::architectureFor("gpt_neo", "").parse_config(io::JsonConfig(config, "config.json"));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

nlohmann::json neoJson(int64_t layers) {
  return {{"vocab_size", 10}, {"hidden_size", 8}, {"num_layers", layers}, {"num_heads", 2}, {"max_position_embeddings", 16}};
}

TEST(GptNeo, ANegativeRepeatCountIsNamed) {
  auto config = neoJson(2);
  config["attention_types"] = {{{"global", "local"}, 1}, {{"local"}, -1}};
  EXPECT_NE(neoError(config).find("attention_types repeats [\"local\"] -1 times: a repeat count must not be negative"),
            std::string::npos)
      << neoError(config);
}

// Without attention_types, transformers' GPTNeoConfig uses [[["global", "local"], 12]] and
// refuses any other layer count than 24: so does this (it was all-global layers here).
TEST(GptNeo, WithoutAttentionTypesTransformersDefaultApplies) {
  const auto msg = neoError(neoJson(2));
  EXPECT_NE(msg.find("attention_types is not set, and transformers' default [[[\"global\",\"local\"],12]] gives 24 "
                     "layers but num_layers is 2: set attention_types"),
            std::string::npos)
      << msg;
  const auto c = model::architectureFor("gpt_neo", "").parse_config(io::JsonConfig(neoJson(24), "config.json"));
  ASSERT_EQ(c.attention_windows.size(), 24u);
  EXPECT_EQ(c.attention_windows[0], 0);
  EXPECT_EQ(c.attention_windows[1], 256);
  EXPECT_EQ(c.attention_windows[23], 256);
  // A huge repeat count is counted, not expanded.
  auto huge = neoJson(2);
  huge["attention_types"] = {{{"global"}, int64_t{1} << 50}};
  EXPECT_NE(neoError(huge).find("attention_types gives more than 2^40 layers"), std::string::npos) << neoError(huge);
}

}  // namespace
}  // namespace posgeom::testing
