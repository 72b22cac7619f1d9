#include <cmath>
#include <tuple>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Gemma-2 against transformers' own model and outputs (tools/hf-goldens): sandwich norms,
// layer 0 in a sliding window of 8 keys, logits scaled by 20^-1/2, soft caps 1.5 on the
// attention logits and 2 on the LM head's (small enough to act on random weights).
INSTANTIATE_TEST_SUITE_P(HfGemma2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gemma2")), goldenCaseName);

model::ModelConfig gemma2Config(const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir s;
  return model::loadModel(editedHfFixture(s.path(), "hf-gemma2", edit), model::Numerics::parse("float32", "cpu")).model->config();
}

TEST(Gemma2, WindowsScaleAndCapsAsTransformersReadsThem) {
  const auto c = gemma2Config([](nlohmann::json&) {});
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{8, 0}));
  EXPECT_NEAR(c.attention_scale, 1.0 / std::sqrt(20.0), 1e-15);
  EXPECT_EQ(c.attention_logit_cap, 1.5);
  EXPECT_EQ(c.final_logit_cap, 2.0);
  // Without layer_types the even layers slide; without the keys, transformers' defaults.
  const auto defaults = gemma2Config([](nlohmann::json& j) {
    for (const char* key : {"layer_types", "sliding_window", "attn_logit_softcapping", "final_logit_softcapping"}) j.erase(key);
  });
  EXPECT_EQ(defaults.attention_windows, (std::vector<int64_t>{4096, 0}));
  EXPECT_EQ(defaults.attention_logit_cap, 50.0);
  EXPECT_EQ(defaults.final_logit_cap, 30.0);
  const auto uncapped = gemma2Config([](nlohmann::json& j) { j["attn_logit_softcapping"] = nullptr; });
  EXPECT_EQ(uncapped.attention_logit_cap, 0.0);
}

TEST(Gemma2, UnknownLayerTypesAreRefusedByName) {
  try {
    gemma2Config([](nlohmann::json& j) { j["layer_types"][1] = "chunked_attention"; });
    FAIL() << "an unknown layer type must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("chunked_attention"), std::string::npos) << e.what();
  }
}

// Each would make the forward non-finite (0: logits times 1/sqrt(0); 1e-320: tanh(x / cap)
// with 1 / cap past float32) or wrong (-20: transformers cannot build it): refused by key.
TEST(Gemma2, ScaleAndCapsThatBreakTheForwardAreRefusedByKey) {
  for (const auto& [key, value, expected] : std::vector<std::tuple<std::string, double, std::string>>{
           {"query_pre_attn_scalar", 0, "query_pre_attn_scalar must be a positive number (got 0)"},
           {"query_pre_attn_scalar", -20, "query_pre_attn_scalar must be a positive number (got -20)"},
           {"attn_logit_softcapping", 1e-320, "attn_logit_softcapping is 1e-320, below float32's smallest normal"},
           {"final_logit_softcapping", 0, "final_logit_softcapping must be positive or null (got 0)"}}) {
    try {
      gemma2Config([key = key, value = value](nlohmann::json& j) { j[key] = value; });
      ADD_FAILURE() << key << " " << value;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("config.json: " + expected), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace posgeom::testing
