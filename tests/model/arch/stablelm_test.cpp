#include <algorithm>

#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// StableLM against transformers' own model and outputs (tools/hf-goldens): LayerNorms with
// weights and biases, half of each 12-wide head turning, biases on q, k and v only, two
// key/value heads for four query heads.
INSTANTIATE_TEST_SUITE_P(HfStableLm, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-stablelm")), goldenCaseName);

TEST(StableLm, AQuarterOfEachHeadTurnsAndQkvBiasesFollowTheConfig) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-stablelm"));
  EXPECT_EQ(given.rope.partial_rotary_factor, 0.5);
  EXPECT_TRUE(given.qkv_bias);
  EXPECT_FALSE(given.attention_bias);  // no bias on o_proj
  EXPECT_EQ(given.norm_eps, 1e-5);
  ScratchDir a, b;
  // transformers' default when no factor is given anywhere: a quarter (16-wide heads here,
  // so that four dims turn).
  const auto absent = model::loadModelConfig(editedHfFixture(a.path(), "hf-stablelm", [](nlohmann::json& j) {
    j["rope_parameters"].erase("partial_rotary_factor");
    j["num_attention_heads"] = 3;
    j["num_key_value_heads"] = 3;
  }));
  EXPECT_EQ(absent.rope.partial_rotary_factor, 0.25);
  const auto unbiased = model::loadModelConfig(editedHfFixture(b.path(), "hf-stablelm", [](nlohmann::json& j) {
    j.erase("use_qkv_bias");
  }));
  EXPECT_FALSE(unbiased.qkv_bias);
  const auto specs = model::architectureFor("stablelm", "test").tensors(unbiased);
  for (const auto& spec : specs) EXPECT_EQ(spec.name.find("q_proj.bias"), std::string::npos) << spec.name;
}

// StableLM-2-12B's shape against transformers: each head's q and k through a bias-free
// LayerNorm of its own (one tensor a head, weights drawn at random), attention and MLP in
// parallel off the input norm, a quarter of each 16-wide head turning, grouped heads.
INSTANTIATE_TEST_SUITE_P(HfStableLm2_12b, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-stablelm-2-12b")), goldenCaseName);

TEST(StableLm, TwelveBsPerHeadNormsAndParallelBlocksAreRead) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-stablelm-2-12b"));
  EXPECT_TRUE(given.qk_layer_norm);
  EXPECT_TRUE(given.parallel_residual);
  const auto plain = model::loadModelConfig(hfFixtureDir("hf-stablelm"));
  EXPECT_FALSE(plain.qk_layer_norm);
  EXPECT_FALSE(plain.parallel_residual);
  // One norm tensor a head, q's for each query head and k's for each key-value head; no
  // post-attention norm with the parallel residual.
  const auto specs = model::architectureFor("stablelm", "test").tensors(given);
  auto has = [&](const std::string& name) {
    return std::any_of(specs.begin(), specs.end(), [&](const auto& s) { return s.name == name; });
  };
  EXPECT_TRUE(has("layers.1.self_attn.q_layernorm.norms.3.weight"));
  EXPECT_TRUE(has("layers.1.self_attn.k_layernorm.norms.1.weight"));
  EXPECT_FALSE(has("layers.1.self_attn.k_layernorm.norms.2.weight"));
  EXPECT_FALSE(has("layers.1.self_attn.q_layernorm.norms.0.bias"));
  EXPECT_FALSE(has("layers.1.post_attention_layernorm.weight"));
  // The heads' maps: centred, each query head with its own norm weights, each key head with
  // its key-value head's; the MLP reads the block's input, so no neuron circuit.
  const auto loaded = model::loadModel(hfFixtureDir("hf-stablelm-2-12b"), model::Numerics::parse("float32", "cpu"));
  const auto maps = loaded.model->queryKeyMaps(1);
  EXPECT_LT(maps.wq.sum(1).abs().max().item<double>(), 1e-6);
  ASSERT_EQ(maps.q_norm.sizes(), (at::IntArrayRef{4, 16}));
  EXPECT_FALSE(at::equal(maps.q_norm[0], maps.q_norm[1]));
  EXPECT_TRUE(at::equal(maps.k_norm[2], maps.k_norm[3]));
  EXPECT_FALSE(at::equal(maps.k_norm[1], maps.k_norm[2]));
  EXPECT_FALSE(loaded.model->neuronCircuit(8).has_value());
}

// What posgeom's StableLM does not do is refused by its key, never approximated: the odd
// rotary part a quarter of a 12-wide head would be.
TEST(StableLm, AnOddRotaryPartIsRefusedByName) {
  ScratchDir s;
  try {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-stablelm", [&](nlohmann::json& j) {
      j["rope_parameters"].erase("partial_rotary_factor");
      j["partial_rotary_factor"] = 0.25;
    }));
    ADD_FAILURE() << "an odd rotary part must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("partial_rotary_factor"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
