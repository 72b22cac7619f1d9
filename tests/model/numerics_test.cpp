#include "posgeom/model/numerics.h"

#include "posgeom/base/error.h"
#include "posgeom/runtime/cpu_features.h"
#include "posgeom/runtime/device.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Numerics, ParsesTheThreeComputeDtypes) {
  EXPECT_EQ(model::Numerics::parse("float32", "cpu").dtype, at::kFloat);
  const auto bf16 = model::Numerics::parse("bfloat16", "cpu");
  EXPECT_EQ(bf16.rounding, at::kBFloat16);
  // In hardware where the CPU has it; else float32 products, every value rounded.
  EXPECT_EQ(bf16.dtype, runtime::cpuComputesBfloat16() ? at::kBFloat16 : at::kFloat);
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

// Emulated or not, bfloat16 keeps 8 bits of mantissa: what the model computes is the same
// numbers a bfloat16 tensor would hold.
TEST(Numerics, Bfloat16OnCpuRoundsThroughBfloat16) {
  const auto bf16 = model::Numerics::parse("bfloat16", "cpu");
  const auto x = bf16.fit(at::tensor({1.0f + 1e-3f, 3.0e38f, 1.0f + 1.0f / 64}));
  EXPECT_EQ(x[0].item<float>(), 1.0f);                      // below bfloat16's resolution at 1
  EXPECT_EQ(x[2].item<float>(), 1.0f + 1.0f / 64);          // within it
  EXPECT_FALSE(std::isinf(x[1].item<float>()));             // float32's range
  EXPECT_TRUE(at::equal(bf16.round(x * 3), (x * 3).to(at::kBFloat16).to(x.scalar_type())));
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
