#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// OLMo against transformers' own model and outputs (tools/hf-goldens): LayerNorms without
// weights, q, k and v clamped at 0.5 (which acts on these weights).
INSTANTIATE_TEST_SUITE_P(HfOlmo, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-olmo")), goldenCaseName);

TEST(Olmo, ClipQkvIsReadOrRefused) {
  ScratchDir a, b, c;
  EXPECT_EQ(model::loadModelConfig(hfFixtureDir("hf-olmo")).qkv_clip, 0.5);
  EXPECT_EQ(model::loadModelConfig(editedHfFixture(a.path(), "hf-olmo", [](nlohmann::json& j) { j["clip_qkv"] = nullptr; })).qkv_clip,
            0.0);
  try {
    model::loadModelConfig(editedHfFixture(b.path(), "hf-olmo", [](nlohmann::json& j) { j["clip_qkv"] = -1; }));
    FAIL() << "a negative clip must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("clip_qkv must be positive"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
