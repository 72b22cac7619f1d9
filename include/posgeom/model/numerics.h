#pragma once
// Where and in what precision a model computes.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

#include <string>

#include "posgeom/runtime/device.h"

namespace posgeom::model {

struct Numerics {
  at::ScalarType dtype = at::kFloat;     // what activations and weights are held in
  at::ScalarType rounding = at::kFloat;  // != dtype: values are rounded through it after every op
  at::Device device = at::kCPU;

  // dtype: float32 | bfloat16 | float16; device: cpu | cuda | cuda:N. LibTorch 1.13 has no
  // float16 matrix kernels on the CPU, so there float16 is emulated: float32 arithmetic
  // with every stored value rounded to float16, as float16 tensor cores accumulate.
  static Numerics parse(const std::string& dtype, const std::string& device);
  // The same from typed values; checks that this build and machine have the device.
  static Numerics of(runtime::ComputeDtype dtype, const runtime::DeviceSpec& device);

  // What norms, attention scores and rotary tables are computed in: float32 for the half
  // types and float32 (as transformers upcasts them), float64 in a float64 run, which is
  // float64 throughout.
  at::ScalarType wide() const { return dtype == at::kDouble ? at::kDouble : at::kFloat; }
  // Rounds a freshly computed tensor to the storage precision.
  at::Tensor round(const at::Tensor& t) const;
  // Brings a tensor (any dtype/device) to this device and precision.
  at::Tensor fit(const at::Tensor& t) const;
  std::string describe() const;
};

}  // namespace posgeom::model
