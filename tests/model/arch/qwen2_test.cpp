#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/random_checkpoint.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Qwen2 against Hugging Face transformers' own model and outputs (tools/hf-goldens):
// grouped-query heads with biases on q, k and v.
INSTANTIATE_TEST_SUITE_P(HfQwen2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-qwen2")), goldenCaseName);

// With use_sliding_window, the layers from max_window_layers on attend within the window
// (transformers' rule): against transformers' outputs, and without the switch none does.
INSTANTIATE_TEST_SUITE_P(HfQwen2Sliding, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-qwen2-sliding")),
                         goldenCaseName);

TEST(Qwen2, SlidingWindowsFromMaxWindowLayersOnlyWhenSwitchedOn) {
  const auto numerics = model::Numerics::parse("float32", "cpu");
  EXPECT_EQ(model::loadModel(hfFixtureDir("hf-qwen2-sliding"), numerics).model->config().attention_windows,
            (std::vector<int64_t>{0, 8}));
  ScratchDir a, b;
  // The older configs: max_window_layers alone decides.
  const auto older = editedHfFixture(a.path(), "hf-qwen2-sliding", [](nlohmann::json& c) { c.erase("layer_types"); });
  EXPECT_EQ(model::loadModel(older, numerics).model->config().attention_windows, (std::vector<int64_t>{0, 8}));
  const auto off = editedHfFixture(b.path(), "hf-qwen2-sliding", [](nlohmann::json& c) { c["use_sliding_window"] = false; });
  EXPECT_EQ(model::loadModel(off, numerics).model->config().attentionWindow(1), 0);
}

TEST(Qwen2, ARandomCheckpointHasTheBiasesAndLoads) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.model_type = "qwen2";
  spec.layers = 1;
  spec.hidden_size = 16;
  spec.heads = 4;
  spec.kv_heads = 2;
  model::writeRandomCheckpoint(spec, s / "m");
  const auto file = io::SafetensorsFile::open(s / "m/model.safetensors");
  for (const char* proj : {"q_proj", "k_proj", "v_proj"})
    EXPECT_NE(file.find(std::string("layers.0.self_attn.") + proj + ".bias"), nullptr) << proj;
  EXPECT_EQ(file.find("layers.0.self_attn.o_proj.bias"), nullptr);
  const auto loaded = model::loadModel(s / "m", model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(loaded.model->config().num_kv_heads, 2);
  EXPECT_EQ(loaded.model->config().model_type, "qwen2");
}

}  // namespace
}  // namespace posgeom::testing
