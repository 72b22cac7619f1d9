#include "golden.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Phi-3 against transformers' own model and outputs (tools/hf-goldens): fused projections,
// half of each head turning, a sliding window of 8 keys in every layer.
INSTANTIATE_TEST_SUITE_P(HfPhi3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-phi3")), goldenCaseName);

TEST(Phi3, FusedProjectionsSplitIntoTheHeadsMaps) {
  const auto loaded = model::loadModel(hfFixtureDir("hf-phi3"), model::Numerics::parse("float32", "cpu"));
  const auto& c = loaded.model->config();
  EXPECT_EQ(c.attention_windows, (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(c.rope.partial_rotary_factor, 0.5);
  const auto file = io::SafetensorsFile::open(hfFixtureDir("hf-phi3") / "model.safetensors");
  const auto qkv = model::tensorFromView(*file.find("model.layers.1.self_attn.qkv_proj.weight"));
  const auto maps = loaded.model->queryKeyMaps(1);
  EXPECT_TRUE(at::equal(maps.wq.reshape({48, 48}), qkv.narrow(0, 0, 48)));      // rows [q | k | v]
  EXPECT_TRUE(at::equal(maps.wk.reshape({48, 48}), qkv.narrow(0, 48, 48)));
}

}  // namespace
}  // namespace posgeom::testing
