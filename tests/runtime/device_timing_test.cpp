#include "posgeom/runtime/device_timing.h"

#include <ATen/ATen.h>

#include "posgeom/runtime/device.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(DeviceTiming, MeasuresAPlausibleMatrixRate) {
  const double gflops = runtime::measureMatmulGflops(runtime::DeviceSpec{}, runtime::ComputeDtype::kFloat32, 128, 4, 2);
  // Any CPU of this century does more than 0.1 GFLOP/s; none does 100 TFLOP/s in float32.
  EXPECT_GT(gflops, 0.1);
  EXPECT_LT(gflops, 1e5);
}

TEST(DeviceTiming, NoCudaRuntimeMeansNoDeviceMemory) {
  if (runtime::cudaDeviceCount() == 0) {
    EXPECT_FALSE(runtime::cudaMemory().has_value());
  }
  runtime::synchronize(runtime::DeviceSpec{});  // a no-op that must not throw
}

}  // namespace
}  // namespace posgeom::testing
