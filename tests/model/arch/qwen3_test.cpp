#include "golden.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Qwen3 against transformers' own model and outputs (tools/hf-goldens): each head's q and k
// RMSNormed before RoPE, head_dim 16 where hidden_size / heads is 12, biases on q, k, v, o.
INSTANTIATE_TEST_SUITE_P(HfQwen3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-qwen3")), goldenCaseName);

TEST(Qwen3, HeadsAreWiderThanHiddenOverHeadsAndCarryTheirNorms) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-qwen3"), model::Numerics::parse("float32", "cpu"));
  const auto& c = loaded.model->config();
  EXPECT_EQ(c.headDim(), 16);
  EXPECT_TRUE(c.attention_bias);
  const auto maps = loaded.model->queryKeyMaps(1);
  ASSERT_TRUE(maps.q_norm.defined() && maps.k_norm.defined());
  EXPECT_EQ(maps.wq.sizes().vec(), (std::vector<int64_t>{4, 16, 48}));
  EXPECT_EQ(maps.q_norm.sizes().vec(), (std::vector<int64_t>{4, 16}));
  EXPECT_TRUE(at::equal(maps.k_norm[0], maps.k_norm[3]));  // one norm per layer, shared by the heads
  EXPECT_GT(maps.bk.abs().sum().item<double>(), 0.0);       // the key bias is kept: the norm does not let it cancel
}

}  // namespace
}  // namespace posgeom::testing
