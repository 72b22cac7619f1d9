#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// SmolLM3 against transformers' own model and outputs (tools/hf-goldens): block 1 NoPE (its
// q and k not turned) with a window of 8 keys, block 0 RoPE over every key, a tied head.
INSTANTIATE_TEST_SUITE_P(HfSmolLm3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-smollm3")), goldenCaseName);

TEST(SmolLm3, NoPeBlocksComeFromTheFlagsOrTheInterval) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-smollm3"));
  EXPECT_TRUE(given.rotates(0));
  EXPECT_FALSE(given.rotates(1));
  EXPECT_EQ(given.attentionWindow(0), 0);
  EXPECT_EQ(given.attentionWindow(1), 8);
  EXPECT_TRUE(given.tie_word_embeddings);
  EXPECT_EQ(model::describePositions(given), "RoPE except block 1 (NoPE)");
  ScratchDir a, b;
  // Without the flags, every no_rope_layer_interval-th block (4 by default); none of 2 here.
  const auto by_interval = model::loadModelConfig(editedHfFixture(a.path(), "hf-smollm3", [](nlohmann::json& j) {
    j.erase("no_rope_layers");
    j.erase("no_rope_layer_interval");
    j.erase("layer_types");
    j["use_sliding_window"] = false;
  }));
  EXPECT_TRUE(by_interval.rotates(0) && by_interval.rotates(1));
  EXPECT_EQ(by_interval.attentionWindow(1), 0);
  // layer_types alone gives no window: transformers reads it only with use_sliding_window.
  const auto flags_only = model::loadModelConfig(editedHfFixture(b.path(), "hf-smollm3", [](nlohmann::json& j) {
    j["no_rope_layers"] = {0, 1};
    j["use_sliding_window"] = false;
  }));
  EXPECT_FALSE(flags_only.rotates(0));
  EXPECT_TRUE(flags_only.rotates(1));
  EXPECT_EQ(flags_only.attentionWindow(1), 0);
}

TEST(SmolLm3, MalformedNoRopeLayersAreRefused) {
  for (const auto& flags : {nlohmann::json::array({1}), nlohmann::json::array({1, 2}), nlohmann::json("1,0")}) {
    ScratchDir s;
    try {
      model::loadModelConfig(editedHfFixture(s.path(), "hf-smollm3", [&flags](nlohmann::json& j) { j["no_rope_layers"] = flags; }));
      ADD_FAILURE() << flags.dump() << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("no_rope_layers"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace posgeom::testing
