#include "golden.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/ops.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

INSTANTIATE_TEST_SUITE_P(TinyBloom, GoldenParity, ::testing::ValuesIn(goldenCases("tiny-bloom", "tiny-bloom")),
                         goldenCaseName);
// The same against Hugging Face transformers' own model and outputs (tools/hf-goldens).
INSTANTIATE_TEST_SUITE_P(HfBloom, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-bloom")), goldenCaseName);

TEST(Bloom, ExposesSixNonPowerOfTwoAlibiSlopes) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  const auto loaded = model::loadModel(sharedDir() / "fixtures/models/tiny-bloom", model::Numerics::parse("float32", "cpu"));
  const auto slopes = loaded.model->alibiSlopes();
  ASSERT_TRUE(slopes.defined());
  EXPECT_TRUE(at::equal(slopes, model::ops::alibiSlopes(6)));
}

}  // namespace
}  // namespace posgeom::testing
