#include "posgeom/runtime/device.h"

#include <ATen/ATen.h>

#include "posgeom/base/error.h"
#include "posgeom/runtime/torch_device.h"
#include "test_devices.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Device, ParsesTheDevicesAndTheirIndex) {
  EXPECT_EQ(runtime::parseDevice("cpu"), runtime::DeviceSpec{});
  const auto cuda = runtime::parseDevice("cuda");
  EXPECT_TRUE(cuda.isCuda());
  EXPECT_EQ(cuda.index, -1);
  EXPECT_EQ(cuda.str(), "cuda");
  const auto second = runtime::parseDevice("cuda:1");
  EXPECT_EQ(second.index, 1);
  EXPECT_EQ(second.str(), "cuda:1");
  for (const char* bad : {"tpu", "cuda:", "cuda:x", "cuda:-1", "cuda1", "CPU", ""})
    EXPECT_THROW(runtime::parseDevice(bad), InputError) << bad;
  try {
    runtime::parseDevice("tpu");
  } catch (const InputError& e) {
    EXPECT_STREQ(e.what(), "--device: 'tpu' is not a device (use cpu, cuda or cuda:N)");
  }
}

TEST(Device, ParsesComputeDtypesAndTheirAliases) {
  EXPECT_EQ(runtime::parseComputeDtype("float32"), runtime::ComputeDtype::kFloat32);
  EXPECT_EQ(runtime::parseComputeDtype("bf16"), runtime::ComputeDtype::kBFloat16);
  EXPECT_EQ(runtime::parseComputeDtype("fp16"), runtime::ComputeDtype::kFloat16);
  EXPECT_STREQ(runtime::computeDtypeName(runtime::ComputeDtype::kBFloat16), "bfloat16");
  EXPECT_EQ(runtime::computeBytes(runtime::ComputeDtype::kFloat32), 4);
  EXPECT_EQ(runtime::computeBytes(runtime::ComputeDtype::kFloat16), 2);
  EXPECT_EQ(runtime::parseComputeDtype("float64"), runtime::ComputeDtype::kFloat64);
  EXPECT_EQ(runtime::parseComputeDtype("fp64"), runtime::ComputeDtype::kFloat64);
  EXPECT_STREQ(runtime::computeDtypeName(runtime::ComputeDtype::kFloat64), "float64");
  EXPECT_EQ(runtime::computeBytes(runtime::ComputeDtype::kFloat64), 8);
  EXPECT_TRUE(runtime::isHalfPrecision(runtime::ComputeDtype::kBFloat16));
  EXPECT_FALSE(runtime::isHalfPrecision(runtime::ComputeDtype::kFloat64));
  EXPECT_FALSE(runtime::isHalfPrecision(runtime::ComputeDtype::kFloat32));
  EXPECT_THROW(runtime::parseComputeDtype("f8"), InputError);
}

TEST(Device, TorchTypesMatch) {
  EXPECT_EQ(runtime::torchDtype(runtime::ComputeDtype::kBFloat16), at::kBFloat16);
  EXPECT_EQ(runtime::torchDtype(runtime::ComputeDtype::kFloat64), at::kDouble);
  EXPECT_EQ(runtime::torchDtype(runtime::ComputeDtype::kFloat16), at::kHalf);
  EXPECT_TRUE(runtime::torchDevice(runtime::DeviceSpec{}).is_cpu());
  EXPECT_EQ(runtime::torchDevice(runtime::parseDevice("cuda:2")).index(), 2);
}

// Refused with the reason: a CPU LibTorch, or a CUDA one on a machine without a GPU (as
// the CUDA build on a CI machine); accepted up to the devices there are.
TEST(Device, CudaIsRefusedWhereNoDeviceIsVisible) {
  runtime::requireDevice(runtime::DeviceSpec{});  // the CPU is always there
  const int count = runtime::cudaDeviceCount();
  EXPECT_GE(count, 0);
  if (!runtime::cudaBuild()) {
    EXPECT_EQ(count, 0);
  }
  if (count == 0) {
    try {
      runtime::requireDevice(runtime::parseDevice("cuda"));
      FAIL() << "cuda without a device";
    } catch (const InputError& e) {
      const std::string why = runtime::cudaBuild() ? "no CUDA device is visible" : "this build of LibTorch has no CUDA";
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
    return;
  }
  runtime::requireDevice(runtime::parseDevice("cuda:" + std::to_string(count - 1)));
  EXPECT_THROW(runtime::requireDevice(runtime::parseDevice("cuda:" + std::to_string(count))), InputError);
}

// A run's GPU becomes the process's current CUDA device (what the allocators, the
// free-memory query and NCCL use): each rank's own, not GPU 0. Without a GPU only the CPU
// case runs (nothing is selected); with one (or POSGEOM_REQUIRE_CUDA=1), the last GPU is
// made current and then GPU 0 again.
TEST(Device, SelectingACudaDeviceMakesItCurrent) {
  const int before = runtime::currentCudaDevice();
  runtime::selectCudaDevice(runtime::DeviceSpec{});
  runtime::selectCudaDevice(runtime::parseDevice("cuda"));  // no index: the current one stays
  EXPECT_EQ(runtime::currentCudaDevice(), before);
  const int count = runtime::cudaDeviceCount();
  if (count == 0 && !cudaRequired()) {
    EXPECT_THROW(runtime::selectCudaDevice(runtime::parseDevice("cuda:0")), InputError);
    return;
  }
  ASSERT_GT(count, 0) << "POSGEOM_REQUIRE_CUDA=1 and no GPU";
  runtime::selectCudaDevice(runtime::parseDevice("cuda:" + std::to_string(count - 1)));
  EXPECT_EQ(runtime::currentCudaDevice(), count - 1);
  runtime::selectCudaDevice(runtime::parseDevice("cuda:0"));
  EXPECT_EQ(runtime::currentCudaDevice(), 0);
}

}  // namespace
}  // namespace posgeom::testing
