#include "posgeom/model/numerics.h"

#include "posgeom/base/error.h"
#include "posgeom/runtime/device.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Numerics, ParsesTheThreeComputeDtypes) {
  EXPECT_EQ(model::Numerics::parse("float32", "cpu").dtype, at::kFloat);
  EXPECT_EQ(model::Numerics::parse("bfloat16", "cpu").dtype, at::kBFloat16);
  const auto half = model::Numerics::parse("float16", "cpu");
  EXPECT_EQ(half.rounding, at::kHalf);
}

TEST(Numerics, Float16OnCpuRoundsThroughHalf) {
  const auto half = model::Numerics::parse("float16", "cpu");
  const auto x = at::tensor({1.0f + 1e-4f, 70000.0f});
  const auto r = half.round(x);
  EXPECT_EQ(r[0].item<float>(), 1.0f);  // below half's resolution at 1
  EXPECT_TRUE(std::isinf(r[1].item<float>()));  // beyond half's range
}

TEST(Numerics, RejectsUnknownDtypeAndDevice) {
  EXPECT_THROW(model::Numerics::parse("int8", "cpu"), InputError);
  EXPECT_THROW(model::Numerics::parse("float32", "tpu"), InputError);
}

TEST(Numerics, CudaIsADeviceWithCudaAndABadInputWithout) {
  if (runtime::cudaDeviceCount() > 0) {
    EXPECT_TRUE(model::Numerics::parse("float16", "cuda:0").device.is_cuda());
    EXPECT_EQ(model::Numerics::parse("float16", "cuda:0").dtype, at::kHalf);  // real float16 on the GPU
  } else {
    EXPECT_THROW(model::Numerics::parse("float32", "cuda"), InputError);
  }
}

}  // namespace
}  // namespace posgeom::testing
