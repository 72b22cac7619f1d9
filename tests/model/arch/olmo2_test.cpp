#include <algorithm>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// OLMo-2 against transformers' own model and outputs (tools/hf-goldens): norms after attention
// and after the MLP only, q and k RMSNormed over all heads together, three query heads and
// one key/value head, biases on every attention map.
INSTANTIATE_TEST_SUITE_P(HfOlmo2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-olmo2")), goldenCaseName);

TEST(Olmo2, NormsAfterEachSublayerAndOneQkNormOverAllHeads) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-olmo2"));
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

// The maps hand each head its part of the joint norms' weights (a key-value head's to each of
// its query heads); no neuron circuit (the MLP's output is normed before it is added).
TEST(Olmo2, QueryKeyMapsGiveEachHeadItsPartOfTheJointNorms) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-olmo2"), model::Numerics::parse("float32", "cpu"));
  EXPECT_FALSE(loaded.model->neuronCircuit(8).has_value());
  const auto maps = loaded.model->queryKeyMaps(1);
  EXPECT_TRUE(maps.joint_norm);
  const auto weights = io::SafetensorsFile::open(hfFixtureDir("hf-olmo2") / "model.safetensors");
  const auto q_norm = model::tensorFromView(weights.get("model.layers.1.self_attn.q_norm.weight")).reshape({3, 16});
  const auto k_norm = model::tensorFromView(weights.get("model.layers.1.self_attn.k_norm.weight")).reshape({1, 16});
  EXPECT_TRUE(at::equal(maps.q_norm, q_norm));
  for (int64_t h = 0; h < 3; ++h) EXPECT_TRUE(at::equal(maps.k_norm[h], k_norm[0])) << h;
  EXPECT_EQ(maps.norm_eps, 1e-5);
}

}  // namespace
}  // namespace posgeom::testing
