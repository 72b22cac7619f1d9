#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// OLMoE against transformers' own model and outputs (tools/hf-goldens): q and k RMSNormed over
// all heads together, four query heads and two key/value heads, every block a mixture of 4
// experts of 32, 2 a token, not renormalised.
INSTANTIATE_TEST_SUITE_P(HfOlmoe, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-olmoe")), goldenCaseName);

TEST(Olmoe, ExpertsInEveryBlockAndJointQkNorms) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-olmoe"));
  EXPECT_EQ(given.moe.experts, 4);
  EXPECT_EQ(given.moe.experts_per_token, 2);
  EXPECT_EQ(given.moe.expert_size, 32);
  EXPECT_FALSE(given.moe.normalize_top_k);
  EXPECT_TRUE(given.moe.weights_in_compute_dtype);
  EXPECT_TRUE(given.moe.sparse(0) && given.moe.sparse(1));
  const auto loaded = model::loadModel(hfFixtureDir("hf-olmoe"), model::Numerics::parse("float32", "cpu"));
  EXPECT_TRUE(loaded.model->queryKeyMaps(0).joint_norm);
  EXPECT_FALSE(loaded.model->neuronCircuit(8).has_value());
}

// transformers clamps OLMoE's q and k after their norms, OLMo's before: not read as OLMo's.
TEST(Olmoe, ClipQkvIsRefusedByName) {
  ScratchDir s;
  try {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-olmoe", [](nlohmann::json& j) { j["clip_qkv"] = 8.0; }));
    FAIL() << "clip_qkv must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("clip_qkv is not supported for olmoe"), std::string::npos) << e.what();
  }
  ScratchDir t;
  EXPECT_EQ(model::loadModelConfig(editedHfFixture(t.path(), "hf-olmoe", [](nlohmann::json& j) { j["clip_qkv"] = nullptr; })).moe.experts, 4);
}

}  // namespace
}  // namespace posgeom::testing
