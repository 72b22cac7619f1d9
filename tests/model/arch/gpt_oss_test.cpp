#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// gpt-oss against transformers' own model and outputs (tools/hf-goldens): sinks drawn wide
// (some heads send most of their weight there), windows of 8 in blocks 0 and 2, YaRN with
// truncate false, biases on every attention map, four experts with biases through a SwiGLU
// clamped at 0.5, two a token, the top two logits softmaxed among themselves.
INSTANTIATE_TEST_SUITE_P(HfGptOss, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gpt-oss")), goldenCaseName);

TEST(GptOss, ConfigReadsWindowsYarnAndTheMixture) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-gpt-oss"));
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{8, 0, 8}));
  EXPECT_EQ(c.rope.type, "yarn");
  EXPECT_FALSE(c.rope.truncate);
  EXPECT_TRUE(c.attention_bias);
  EXPECT_EQ(c.moe.experts, 4);
  EXPECT_EQ(c.moe.experts_per_token, 2);
  EXPECT_TRUE(c.moe.softmax_after_top_k);
  EXPECT_EQ(c.moe.swiglu_limit, 0.5);
  EXPECT_EQ(c.moe.swiglu_alpha, 1.702);
}

// Each block's kernel positions carry its heads' sink logits as the checkpoint stores them.
TEST(GptOss, KernelPositionsCarryEachBlocksSinks) {
  const auto dir = hfFixtureDir("hf-gpt-oss");
  const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
  const auto weights = io::SafetensorsFile::open(dir / "model.safetensors");
  for (int64_t b = 0; b < 3; ++b) {
    const auto stored = model::tensorFromView(weights.get("model.layers." + std::to_string(b) + ".self_attn.sinks")).to(at::kDouble);
    const auto p = loaded.model->kernelPositions(b, 24);
    ASSERT_EQ(p.sinks.size(), 4u) << b;
    for (int64_t h = 0; h < 4; ++h) {
      EXPECT_EQ(p.sinks[static_cast<size_t>(h)], stored[h].item<double>()) << b << " " << h;
      ASSERT_TRUE(p.head(h).sink.has_value());
      EXPECT_EQ(*p.head(h).sink, stored[h].item<double>());
    }
  }
}

TEST(GptOss, TheHubsMxfp4CheckpointsAreRefusedByName) {
  ScratchDir s;
  const auto error = inputErrorOf([&] {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-gpt-oss", [](nlohmann::json& j) {
      j["quantization_config"] = {{"quant_method", "mxfp4"}};
    }));
  });
  EXPECT_NE(error.find("quantization_config is not supported for gpt_oss"), std::string::npos) << error;
}

// A random gpt-oss writes a config that reads back as its mixture.
TEST(GptOss, AConfigFromSizesRoundTrips) {
  const auto& arch = model::architectureFor("gpt_oss", "test");
  model::ModelShape shape;
  shape.layers = 2, shape.hidden_size = 48, shape.heads = 4, shape.kv_heads = 2, shape.vocab_size = 50, shape.max_positions = 32;
  const auto from_sizes = arch.config_for_shape(shape);
  const auto reread = arch.parse_config(io::JsonConfig(arch.to_config_json(from_sizes), "test"));
  EXPECT_EQ(reread.moe.experts, from_sizes.moe.experts);
  EXPECT_EQ(reread.moe.swiglu_limit, 7.0);
  EXPECT_TRUE(reread.moe.softmax_after_top_k);
  EXPECT_EQ(arch.tensors(reread).size(), arch.tensors(from_sizes).size());
}

}  // namespace
}  // namespace posgeom::testing
