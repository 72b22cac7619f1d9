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

TEST(Qwen2, SlidingWindowsAreRefusedByName) {
  ScratchDir s;
  std::filesystem::copy(hfFixtureDir("hf-qwen2"), s / "m", std::filesystem::copy_options::recursive);
  auto config = readFile(s / "m/config.json");
  const std::string off = "\"use_sliding_window\": false";
  ASSERT_NE(config.find(off), std::string::npos);
  config.replace(config.find(off), off.size(), "\"use_sliding_window\": true");
  writeFile(s / "m/config.json", config);
  try {
    model::loadModel(s / "m", model::Numerics::parse("float32", "cpu"));
    FAIL() << "a sliding window must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("sliding-window attention"), std::string::npos) << e.what();
  }
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
