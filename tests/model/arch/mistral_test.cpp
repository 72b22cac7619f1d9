#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Mistral against transformers' own model and outputs (tools/hf-goldens): a sliding window
// of 8 keys in every layer, shorter than the 24 positions of the golden ids.
INSTANTIATE_TEST_SUITE_P(HfMistral, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-mistral")), goldenCaseName);

model::ModelConfig mistralConfig(const nlohmann::json& sliding_window) {
  ScratchDir s;
  const auto dir = editedHfFixture(s.path(), "hf-mistral", [&](nlohmann::json& c) { c["sliding_window"] = sliding_window; });
  return model::loadModel(dir, model::Numerics::parse("float32", "cpu")).model->config();
}

TEST(Mistral, EveryLayerGetsTheSlidingWindowUnlessItIsNull) {
  const auto windowed = mistralConfig(5);
  EXPECT_EQ(windowed.attention_windows, (std::vector<int64_t>{5, 5}));
  EXPECT_EQ(windowed.attentionWindow(1), 5);
  const auto full = mistralConfig(nullptr);
  EXPECT_EQ(full.attentionWindow(0), 0);
  EXPECT_EQ(full.attentionWindow(1), 0);
}

// 10^30 is a positive integer: what is wrong with it is its size.
TEST(Mistral, AHugeSlidingWindowIsSaidToBeTooLarge) {
  try {
    mistralConfig(1e30);
    FAIL() << "a window of 10^30 must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: key 'sliding_window' is 1e+30, too large"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
