#include "golden.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// tiny-gpt2-f16-prefixed stores float16 weights under "transformer." names.
INSTANTIATE_TEST_SUITE_P(TinyGpt2, GoldenParity, ::testing::ValuesIn(goldenCases("tiny-gpt2", "tiny-gpt2")),
                         goldenCaseName);
// The same against Hugging Face transformers' own model and outputs (tools/hf-goldens).
INSTANTIATE_TEST_SUITE_P(HfGpt2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-gpt2")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(TinyGpt2F16Prefixed, GoldenParity,
                         ::testing::ValuesIn(goldenCases("tiny-gpt2-f16-prefixed", "tiny-gpt2-f16-prefixed")),
                         goldenCaseName);

TEST(Gpt2, QueryKeyMapsReproduceTheFusedProjection) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  const auto loaded = model::loadModel(sharedDir() / "fixtures/models/tiny-gpt2", model::Numerics::parse("float32", "cpu"));
  const auto maps = loaded.model->queryKeyMaps(1);
  const int64_t d = 64, h = 4, dh = 16;
  ASSERT_EQ(maps.wq.sizes(), (at::IntArrayRef{h, dh, d}));
  // c_attn stores [in, 3d]: the first d output columns are the query, the next d the key.
  const auto file = io::SafetensorsFile::open(sharedDir() / "fixtures/models/tiny-gpt2/model.safetensors");
  const auto w = model::tensorFromView(file.get("h.1.attn.c_attn.weight"));
  const auto b = model::tensorFromView(file.get("h.1.attn.c_attn.bias"));
  const auto x = at::randn({d});
  const auto q_ref = (at::matmul(x, w) + b).narrow(0, 0, d).view({h, dh});
  const auto k_ref = (at::matmul(x, w) + b).narrow(0, d, d).view({h, dh});
  EXPECT_TRUE(at::allclose(at::matmul(maps.wq, x) + maps.bq, q_ref, 1e-5, 1e-5));
  EXPECT_TRUE(at::allclose(at::matmul(maps.wk, x) + maps.bk, k_ref, 1e-5, 1e-5));
}

}  // namespace
}  // namespace posgeom::testing
