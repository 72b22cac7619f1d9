#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Cohere against transformers' own model and outputs (tools/hf-goldens): weight-only
// LayerNorms, attention and MLP in parallel off one norm, RoPE on interleaved pairs, two
// key/value heads for four query heads, a tied head, logits times 0.25.
INSTANTIATE_TEST_SUITE_P(HfCohere, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-cohere")), goldenCaseName);

TEST(Cohere, InterleavedRopeParallelBlocksAndTheLogitScale) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-cohere"));
  EXPECT_TRUE(given.rope.interleaved);
  EXPECT_TRUE(given.parallel_residual);
  EXPECT_TRUE(given.tie_word_embeddings);
  EXPECT_EQ(given.logit_divisor, 4.0);
  ScratchDir s;
  const auto defaults = model::loadModelConfig(editedHfFixture(s.path(), "hf-cohere", [](nlohmann::json& j) {
    j.erase("logit_scale");
  }));
  EXPECT_EQ(defaults.logit_divisor, 16.0);  // transformers' 0.0625
  // Its MLP reads the block's input: the neuron circuit of the Llama-style blocks does not hold.
  EXPECT_FALSE(model::loadModel(hfFixtureDir("hf-cohere"), model::Numerics::parse("float32", "cpu")).model->neuronCircuit(8).has_value());
}

// Command-R+'s shape: each head's q and k through a LayerNorm of its own (weights per head,
// drawn at random; grouped key heads), against transformers.
INSTANTIATE_TEST_SUITE_P(HfCohereQkNorm, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-cohere-qk-norm")), goldenCaseName);

TEST(Cohere, PerHeadQkNormsAreReadFromUseQkNorm) {
  EXPECT_TRUE(model::loadModelConfig(hfFixtureDir("hf-cohere-qk-norm")).qk_layer_norm);
  EXPECT_FALSE(model::loadModelConfig(hfFixtureDir("hf-cohere")).qk_layer_norm);
  // Its maps for the heads: centred (each head's rows sum to zero over its dims), with the
  // head's own norm weights, the key's of its key-value head.
  const auto loaded = model::loadModel(hfFixtureDir("hf-cohere-qk-norm"), model::Numerics::parse("float32", "cpu"));
  const auto maps = loaded.model->queryKeyMaps(1);
  EXPECT_LT(maps.wq.sum(1).abs().max().item<double>(), 1e-6);
  EXPECT_LT(maps.bk.sum(1).abs().max().item<double>(), 1e-6);
  ASSERT_EQ(maps.k_norm.sizes(), (at::IntArrayRef{4, 12}));
  EXPECT_TRUE(at::equal(maps.k_norm[0], maps.k_norm[1]));
  EXPECT_FALSE(at::equal(maps.k_norm[1], maps.k_norm[2]));
}

}  // namespace
}  // namespace posgeom::testing
