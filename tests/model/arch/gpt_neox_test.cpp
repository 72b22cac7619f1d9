#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// GPT-NeoX / Pythia against transformers' own model and outputs (tools/hf-goldens): a
// quarter of each 16-wide head turning with the parallel residual, half of it with the serial.
INSTANTIATE_TEST_SUITE_P(HfGptNeoX, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gpt-neox")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfGptNeoXSerial, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gpt-neox-serial")),
                         goldenCaseName);

model::ModelConfig neoxConfig(const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir s;
  return model::loadModelConfig(editedHfFixture(s.path(), "hf-gpt-neox", edit));
}

// Pythia's released configs predate rope_parameters: rotary_pct and rotary_emb_base.
TEST(GptNeoX, LegacyRotaryKeysAreRead) {
  const auto current = neoxConfig([](nlohmann::json&) {});
  EXPECT_EQ(current.rope.partial_rotary_factor, 0.25);
  EXPECT_TRUE(current.parallel_residual);
  const auto legacy = neoxConfig([](nlohmann::json& c) {
    c.erase("rope_parameters");
    c["rotary_pct"] = 0.5;
    c["rotary_emb_base"] = 20000;
    c["use_parallel_residual"] = false;
  });
  EXPECT_EQ(legacy.rope.partial_rotary_factor, 0.5);
  EXPECT_EQ(legacy.rope.theta, 20000.0);
  EXPECT_FALSE(legacy.parallel_residual);
  EXPECT_EQ(model::ropeInverseFrequencies(legacy.rope, legacy.headDim(), legacy.max_positions, 24).size(), 4u);
}

TEST(GptNeoX, AnOddRotaryWidthIsRefused) {
  try {
    neoxConfig([](nlohmann::json& c) { c["rope_parameters"]["partial_rotary_factor"] = 0.2; });  // 3 of 16 dims
    FAIL() << "an odd rotary width must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("rotary_pct"), std::string::npos) << e.what();
  }
}

// theta 0 was refused under rope_parameters but not as Pythia's rotary_emb_base, and made
// every hidden state after the embedding NaN.
TEST(GptNeoX, ALegacyRotaryBaseOfZeroIsRefusedByKey) {
  try {
    neoxConfig([](nlohmann::json& c) {
      c.erase("rope_parameters");
      c["rotary_pct"] = 0.25;
      c["rotary_emb_base"] = 0;
    });
    FAIL() << "rotary_emb_base 0 must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: rotary_emb_base must be a positive number (got 0)"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
