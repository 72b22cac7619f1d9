#include "golden.h"
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

TEST(Llama, KeyMapsAreSharedWithinGroups) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  const auto loaded = model::loadModel(sharedDir() / "fixtures/models/tiny-llama", model::Numerics::parse("float32", "cpu"));
  const auto maps = loaded.model->queryKeyMaps(0);
  ASSERT_EQ(maps.wk.size(0), 8);
  EXPECT_TRUE(at::equal(maps.wk[0], maps.wk[1]));   // query heads 0,1 share key head 0
  EXPECT_FALSE(at::equal(maps.wk[1], maps.wk[2]));  // head 2 uses key head 1
  EXPECT_EQ(maps.bq.abs().sum().item<double>(), 0.0);
}

}  // namespace
}  // namespace posgeom::testing
