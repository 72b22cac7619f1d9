#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
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

TEST(Cohere, PerHeadQkNormsAreRefusedByName) {
  ScratchDir s;
  try {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-cohere", [](nlohmann::json& j) { j["use_qk_norm"] = true; }));
    ADD_FAILURE() << "use_qk_norm must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("use_qk_norm"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
