#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Phi (1 / 1.5 / 2) against transformers' own model and outputs (tools/hf-goldens): half of
// each 12-wide head turns, attention and a dense MLP in parallel off one LayerNorm, biases on
// every map and on the LM head.
INSTANTIATE_TEST_SUITE_P(HfPhi, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-phi")), goldenCaseName);

TEST(Phi, HalfOfEachHeadTurnsUnlessTheConfigSays) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-phi"));
  EXPECT_EQ(given.rope.partial_rotary_factor, 0.5);
  EXPECT_TRUE(given.parallel_residual);
  ScratchDir a, b;
  // transformers' default when no factor is given anywhere is 0.5 as well.
  const auto absent = model::loadModelConfig(editedHfFixture(a.path(), "hf-phi", [](nlohmann::json& j) {
    j["rope_parameters"].erase("partial_rotary_factor");
  }));
  EXPECT_EQ(absent.rope.partial_rotary_factor, 0.5);
  const auto whole = model::loadModelConfig(editedHfFixture(b.path(), "hf-phi", [](nlohmann::json& j) {
    j["rope_parameters"]["partial_rotary_factor"] = 1.0;
  }));
  EXPECT_EQ(whole.rope.partial_rotary_factor, 1.0);
}

// What posgeom's Phi does not do is refused by its key, never approximated.
TEST(Phi, GroupedHeadsAndQkLayerNormAreRefusedByName) {
  const std::vector<std::pair<std::string, nlohmann::json>> edits{{"num_key_value_heads", 2}, {"qk_layernorm", true}};
  for (const auto& [key, value] : edits) {
    ScratchDir s;
    try {
      model::loadModelConfig(editedHfFixture(s.path(), "hf-phi", [&](nlohmann::json& j) { j[key] = value; }));
      ADD_FAILURE() << key << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace posgeom::testing
