#include "golden.h"
#include "posgeom/model/loader.h"
#include "posgeom/model/ops.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(BloomGolden, Float32MatchesReference) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  expectMatchesGolden("tiny-bloom", "tiny-bloom", "float32", false, kFloat32Tolerance);
}
TEST(BloomGolden, BFloat16WithinTolerance) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  expectMatchesGolden("tiny-bloom", "tiny-bloom", "bfloat16", false, kBFloat16Tolerance);
}
TEST(BloomGolden, Float16WithinTolerance) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  expectMatchesGolden("tiny-bloom", "tiny-bloom", "float16", false, kFloat16Tolerance);
}

TEST(Bloom, ExposesSixNonPowerOfTwoAlibiSlopes) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  const auto loaded = model::loadModel(sharedDir() / "fixtures/models/tiny-bloom", model::Numerics::parse("float32", "cpu"));
  const auto slopes = loaded.model->alibiSlopes();
  ASSERT_TRUE(slopes.defined());
  EXPECT_TRUE(at::equal(slopes, model::ops::alibiSlopes(6)));
}

}  // namespace
}  // namespace posgeom::testing
