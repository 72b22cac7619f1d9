#include "posgeom/model/device_timing.h"

#include "posgeom/model/numerics.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(DeviceTiming, MeasuresAPlausibleMatrixRate) {
  const auto num = model::Numerics::parse("float32", "cpu");
  const double gflops = model::measureMatmulGflops(num, 128, 4, 2);
  // Any CPU of this century does more than 0.1 GFLOP/s; none does 100 TFLOP/s in float32.
  EXPECT_GT(gflops, 0.1);
  EXPECT_LT(gflops, 1e5);
}

TEST(DeviceTiming, NoCudaRuntimeMeansNoDeviceMemory) {
  if (!at::hasCUDA()) {
    EXPECT_FALSE(model::cudaMemory().has_value());
  }
  model::synchronize(model::Numerics::parse("float32", "cpu"));  // a no-op that must not throw
}

}  // namespace
}  // namespace posgeom::testing
