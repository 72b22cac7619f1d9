#include <functional>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// tiny-llama is sharded (index file), stored in bfloat16, with 8 query and 4 key/value heads.
INSTANTIATE_TEST_SUITE_P(TinyLlama, GoldenParity, ::testing::ValuesIn(goldenCases("tiny-llama", "tiny-llama")),
                         goldenCaseName);
// The same against Hugging Face transformers' own model and outputs (tools/hf-goldens).
INSTANTIATE_TEST_SUITE_P(HfLlama, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-llama")), goldenCaseName);
// Llama-3.1's scaled RoPE (all three bands at head_dim 12), linear interpolation with
// attention_bias, and dynamic NTK scaling past max_position_embeddings.
INSTANTIATE_TEST_SUITE_P(HfLlama3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-llama3")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfLlamaLinear, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-llama-linear")),
                         goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfLlamaDynamic, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-llama-dynamic")),
                         goldenCaseName);
// YaRN: a pair kept, a pair half and half, the rest slowed 4 times; cos and sin times 1.139.
INSTANTIATE_TEST_SUITE_P(HfLlamaYarn, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-llama-yarn")), goldenCaseName);

TEST(Llama, KeyMapsAreSharedWithinGroups) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  const auto loaded = model::loadModel(sharedDir() / "fixtures/models/tiny-llama", model::Numerics::parse("float32", "cpu"));
  const auto maps = loaded.model->queryKeyMaps(0);
  ASSERT_EQ(maps.wk.size(0), 8);
  EXPECT_TRUE(at::equal(maps.wk[0], maps.wk[1]));   // query heads 0,1 share key head 0
  EXPECT_FALSE(at::equal(maps.wk[1], maps.wk[2]));  // head 2 uses key head 1
  EXPECT_EQ(maps.bq.abs().sum().item<double>(), 0.0);
}

std::string llamaConfigError(const std::function<void(nlohmann::json&)>& edit) {
  ScratchDir s;
  try {
    model::loadModelConfig(editedHfFixture(s.path(), "hf-llama", edit));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// transformers fails on a legacy rope_scaling with a factor and no type; posgeom used to
// drop the factor and give the unscaled model's numbers.
TEST(Llama, ALegacyScalingWithoutATypeIsRefusedByName) {
  const auto msg = llamaConfigError([](nlohmann::json& c) {
    c.erase("rope_parameters");
    c["rope_scaling"] = {{"factor", 2.0}};
  });
  EXPECT_NE(msg.find("config.json: rope_scaling gives a factor but no rope_type"), std::string::npos) << msg;
}

// Every key RoPE's base can come from, and the norm's epsilon, are checked before the forward.
TEST(Llama, ValuesThatMakeTheForwardNonFiniteAreRefusedByKey) {
  for (const auto& [edit, expected] : std::vector<std::pair<std::function<void(nlohmann::json&)>, std::string>>{
           {[](nlohmann::json& c) {
              c.erase("rope_parameters");
              c["rope_theta"] = 0;
            },
            "rope_theta must be a positive number (got 0)"},
           {[](nlohmann::json& c) { c["rope_parameters"]["rope_theta"] = 1e-320; }, "rope_parameters.rope_theta is 1e-320"},
           {[](nlohmann::json& c) { c["rms_norm_eps"] = -1; }, "rms_norm_eps must be a number >= 0 (got -1)"}}) {
    const auto msg = llamaConfigError(edit);
    EXPECT_NE(msg.find("config.json: " + expected), std::string::npos) << msg;
  }
}

// tie_word_embeddings true beside a stored lm_head.weight: transformers ties the head to the
// embedding, so the logits are the final norm times the embedding, not the stored head.
TEST(Llama, ATiedHeadIsTheEmbeddingOverAStoredOne) {
  ScratchDir s;
  const auto dir = editedHfFixture(s.path(), "hf-llama", [](nlohmann::json& c) { c["tie_word_embeddings"] = true; });
  const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", "cpu"));
  model::ForwardRequest r;
  r.ids = at::arange(8, at::kLong).unsqueeze(0);
  r.want_final_norm = true;
  r.want_logits = true;
  const auto out = loaded.model->forward(r);
  const auto file = io::SafetensorsFile::open(dir / "model.safetensors");
  const auto embed = model::tensorFromView(file.get("model.embed_tokens.weight")).to(at::kFloat);
  const auto stored = model::tensorFromView(file.get("lm_head.weight")).to(at::kFloat);
  EXPECT_TRUE(at::allclose(out.logits, at::matmul(out.final_norm, embed.t()), 1e-5, 1e-5));
  EXPECT_FALSE(at::allclose(out.logits, at::matmul(out.final_norm, stored.t()), 1e-3, 1e-3));
}

}  // namespace
}  // namespace posgeom::testing
