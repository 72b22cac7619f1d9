#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Qwen2-MoE against transformers' own model and outputs (tools/hf-goldens): block 0 a
// mixture of 4 experts (2 a token, not renormalised) with a gated shared expert, block 1
// dense (mlp_only_layers); biases on q, k and v.
INSTANTIATE_TEST_SUITE_P(HfQwen2Moe, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-qwen2-moe")), goldenCaseName);

TEST(Qwen2Moe, DenseBlocksSharedExpertAndBiasesFollowTheConfig) {
  const auto config = model::loadModelConfig(hfFixtureDir("hf-qwen2-moe"));
  EXPECT_TRUE(config.moe.sparse(0));
  EXPECT_FALSE(config.moe.sparse(1));
  EXPECT_EQ(config.moe.expert_size, 32);
  EXPECT_EQ(config.moe.shared_expert_size, 56);
  EXPECT_FALSE(config.moe.normalize_top_k);
  EXPECT_TRUE(config.moe.weights_in_compute_dtype);
  EXPECT_TRUE(config.qkv_bias);
  // decoder_sparse_step 2: blocks 1, 3, ... sparse (i + 1 a multiple of 2), unless listed dense.
  ScratchDir s;
  const auto stepped = model::loadModelConfig(editedHfFixture(s.path(), "hf-qwen2-moe", [](nlohmann::json& j) {
    j["decoder_sparse_step"] = 2;
    j["mlp_only_layers"] = nlohmann::json::array();
    j["qkv_bias"] = false;
  }));
  EXPECT_FALSE(stepped.moe.sparse(0));
  EXPECT_TRUE(stepped.moe.sparse(1));
  EXPECT_FALSE(stepped.qkv_bias);
  bool dense_mlp_in_block_0 = false, router_in_block_1 = false;
  for (const auto& spec : model::architectureFor("qwen2_moe", "test").tensors(stepped)) {
    dense_mlp_in_block_0 |= spec.name == "layers.0.mlp.gate_proj.weight";
    router_in_block_1 |= spec.name == "layers.1.mlp.gate.weight";
  }
  EXPECT_TRUE(dense_mlp_in_block_0);
  EXPECT_TRUE(router_in_block_1);
}

TEST(Qwen2Moe, AnMlpOnlyLayerOutsideTheBlocksIsRefused) {
  ScratchDir s;
  const auto refusal = inputErrorOf([&] {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-qwen2-moe", [](nlohmann::json& j) { j["mlp_only_layers"] = {2}; }));
  });
  EXPECT_NE(refusal.find("mlp_only_layers entry 2 is not a block index in 0..1"), std::string::npos) << refusal;
}

}  // namespace
}  // namespace posgeom::testing
