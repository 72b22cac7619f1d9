#include "posgeom/model/numerics.h"

#include "posgeom/base/error.h"
#include "posgeom/runtime/torch_device.h"

namespace posgeom::model {

Numerics Numerics::parse(const std::string& dtype, const std::string& device) {
  const auto d = runtime::parseDevice(device);
  return of(runtime::parseComputeDtype(dtype), d);
}

Numerics Numerics::of(runtime::ComputeDtype dtype, const runtime::DeviceSpec& device) {
  runtime::requireDevice(device);
  Numerics n;
  n.device = runtime::torchDevice(device);
  n.rounding = runtime::torchDtype(dtype);
  // float16 on the CPU: float32 arithmetic, every stored value rounded to float16.
  n.dtype = n.rounding == at::kHalf && n.device.is_cpu() ? at::kFloat : n.rounding;
  return n;
}

at::Tensor Numerics::round(const at::Tensor& t) const {
  if (rounding == dtype) return t;
  return t.to(rounding).to(dtype);
}

at::Tensor Numerics::fit(const at::Tensor& t) const { return round(t.to(device, dtype)); }

std::string Numerics::describe() const {
  std::string s = std::string(c10::toString(rounding));
  if (rounding != dtype) s += " (emulated in " + std::string(c10::toString(dtype)) + ")";
  return s + " on " + device.str();
}

}  // namespace posgeom::model
