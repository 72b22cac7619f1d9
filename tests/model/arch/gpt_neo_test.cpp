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

}  // namespace
}  // namespace posgeom::testing
