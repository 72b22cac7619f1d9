#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// OLMo-3 against transformers' own model and outputs (tools/hf-goldens): OLMo-2's blocks,
// windows of 8 in three blocks of four, YaRN in the global block and a RoPE of their own in
// the windowed ones.
INSTANTIATE_TEST_SUITE_P(HfOlmo3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-olmo3")), goldenCaseName);

TEST(Olmo3, WindowsAndRopePerLayerType) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-olmo3"));
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{8, 8, 8, 0}));
  EXPECT_EQ(c.ropeFor(3).type, "yarn");
  EXPECT_EQ(c.ropeFor(3).theta, 100.0);
  EXPECT_EQ(c.ropeFor(0).type, "default");
  EXPECT_EQ(c.ropeFor(0).theta, 1000.0);
  // The released configs' defaults: three windowed blocks in four of 4096, base 500,000.
  ScratchDir s;
  const auto defaults = model::loadModelConfig(editedHfFixture(s.path(), "hf-olmo3", [](nlohmann::json& j) {
    j.erase("layer_types");
    j.erase("sliding_window");
    j.erase("rope_parameters");
  }));
  EXPECT_EQ(defaults.attention_windows, (std::vector<int64_t>{4096, 4096, 4096, 0}));
  EXPECT_EQ(defaults.ropeFor(0).theta, 500000.0);
  EXPECT_EQ(defaults.ropeFor(3).theta, 500000.0);
}

}  // namespace
}  // namespace posgeom::testing
