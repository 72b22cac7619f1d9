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

// The allowance the memory plans add for LibTorch itself covers a whole tiny run of this
// build's binary (the CUDA wheel's libraries take 458 MiB of it on the CPU, Debian's 184).
TEST(DeviceTiming, TheRuntimeAllowanceCoversATinyRunsWholeResidentSet) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto r = runPosgeom({"analyze", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--corpus", "random",
                             "--num-seqs", "4", "--seq-len", "32", "--out", (s / "out").string(), "-q"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_GT(r.peak_rss_bytes, 64 << 20);  // measured: LibTorch's libraries alone are more
  EXPECT_LE(r.peak_rss_bytes, runtime::runtimeAllowanceBytes(runtime::DeviceSpec{}));
}

}  // namespace
}  // namespace posgeom::testing
