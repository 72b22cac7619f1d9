#include <algorithm>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// OLMo-2 against transformers' own model and outputs (tools/hf-goldens): norms after attention
// and after the MLP only, q and k RMSNormed over all heads together, three query heads and
// one key/value head, biases on every attention map.
INSTANTIATE_TEST_SUITE_P(HfOlmo2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-olmo2")), goldenCaseName);

TEST(Olmo2, NormsAfterEachSublayerAndOneQkNormOverAllHeads) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-olmo2"));
  EXPECT_TRUE(given.joint_qk_norm);
  ScratchDir s;
  const auto defaults = model::loadModelConfig(editedHfFixture(s.path(), "hf-olmo2", [](nlohmann::json& j) { j.erase("rms_norm_eps"); }));
  EXPECT_EQ(defaults.norm_eps, 1e-5);  // transformers' default for OLMo-2, not Llama's 1e-6
  std::vector<std::pair<std::string, std::vector<int64_t>>> specs;
  for (const auto& spec : model::architectureFor("olmo2", "test").tensors(given)) specs.emplace_back(spec.name, spec.shape);
  auto shape_of = [&](const std::string& name) {
    const auto it = std::find_if(specs.begin(), specs.end(), [&](const auto& p) { return p.first == name; });
    return it == specs.end() ? std::vector<int64_t>{} : it->second;
  };
  EXPECT_TRUE(shape_of("layers.0.input_layernorm.weight").empty());  // nothing normed before attention
  EXPECT_EQ(shape_of("layers.0.self_attn.q_norm.weight"), (std::vector<int64_t>{48}));  // 3 heads x 16
  EXPECT_EQ(shape_of("layers.0.self_attn.k_norm.weight"), (std::vector<int64_t>{16}));  // 1 key/value head
  EXPECT_EQ(shape_of("layers.0.post_feedforward_layernorm.weight"), (std::vector<int64_t>{48}));
}

// The heads analysis models a head's own q/k norm, not one shared by all heads: no maps, and
// no neuron circuit (the MLP's output is normed before it is added).
TEST(Olmo2, GivesNoQueryKeyMapsAndNoNeuronCircuit) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-olmo2"), model::Numerics::parse("float32", "cpu"));
  EXPECT_FALSE(loaded.model->neuronCircuit(8).has_value());
  try {
    loaded.model->queryKeyMaps(0);
    ADD_FAILURE() << "maps of a joint q/k norm must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("--heads"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
