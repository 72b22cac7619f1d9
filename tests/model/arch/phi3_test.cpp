#include <cmath>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Phi-3 against transformers' own model and outputs (tools/hf-goldens): fused projections,
// half of each head turning, a sliding window of 8 keys in every layer.
INSTANTIATE_TEST_SUITE_P(HfPhi3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-phi3")), goldenCaseName);

TEST(Phi3, FusedProjectionsSplitIntoTheHeadsMaps) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-phi3"), model::Numerics::parse("float32", "cpu"));
  const auto& c = loaded.model->config();
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(c.rope.partial_rotary_factor, 0.5);
  const auto file = io::SafetensorsFile::open(hfFixtureDir("hf-phi3") / "model.safetensors");
  const auto qkv = model::tensorFromView(*file.find("model.layers.1.self_attn.qkv_proj.weight"));
  const auto maps = loaded.model->queryKeyMaps(1);
  EXPECT_TRUE(at::equal(maps.wq.reshape({48, 48}), qkv.narrow(0, 0, 48)));      // rows [q | k | v]
  EXPECT_TRUE(at::equal(maps.wk.reshape({48, 48}), qkv.narrow(0, 48, 48)));
}

// longrope (the 128k variants) against transformers: the 24 test positions pass the
// pretraining context of 16, so each turning pair is slowed by its long factor.
INSTANTIATE_TEST_SUITE_P(HfPhi3Longrope, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-phi3-longrope")), goldenCaseName);

TEST(Phi3, LongropeReadsBothFactorListsAndTheirAttentionFactor) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-phi3-longrope"));
  EXPECT_EQ(c.rope.type, "longrope");
  EXPECT_EQ(c.rope.original_max_positions, 16);
  EXPECT_EQ(c.rope.short_factor, (std::vector<double>{1.0, 1.5, 2.0}));
  EXPECT_EQ(c.rope.long_factor, (std::vector<double>{1.0, 4.0, 9.0}));
  EXPECT_DOUBLE_EQ(c.rope.attention_factor, std::sqrt(1 + std::log(4.0) / std::log(16.0)));  // factor 64 / 16
  // One factor a turning pair (3 here): a list of another length is refused by name.
  ScratchDir s;
  try {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-phi3-longrope", [](nlohmann::json& j) {
      j["rope_parameters"]["long_factor"] = {1.0, 4.0};
    }));
    FAIL() << "two long factors for three pairs must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("long_factor has 2 entries, but each head turns 3 pairs"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
