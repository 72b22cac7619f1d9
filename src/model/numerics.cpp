#include "posgeom/model/numerics.h"

#include "posgeom/base/error.h"

namespace posgeom::model {

Numerics Numerics::parse(const std::string& dtype, const std::string& device) {
  Numerics n;
  if (device == "cpu") {
    n.device = at::kCPU;
  } else if (device.rfind("cuda", 0) == 0) {
    if (!at::hasCUDA()) throw InputError("--device", "'" + device + "' asked for, but this build of LibTorch has no CUDA");
    try {
      n.device = at::Device(device);
    } catch (const std::exception&) {
      throw InputError("--device", "'" + device + "' is not a device (use cpu, cuda or cuda:N)");
    }
  } else {
    throw InputError("--device", "'" + device + "' is not a device (use cpu, cuda or cuda:N)");
  }
  if (dtype == "float32" || dtype == "fp32") {
    n.dtype = n.rounding = at::kFloat;
  } else if (dtype == "bfloat16" || dtype == "bf16") {
    n.dtype = n.rounding = at::kBFloat16;
  } else if (dtype == "float16" || dtype == "fp16") {
    n.rounding = at::kHalf;
    n.dtype = n.device.is_cpu() ? at::kFloat : at::kHalf;
  } else {
    throw InputError("--dtype", "'" + dtype + "' is not a compute dtype (use float32, bfloat16 or float16)");
  }
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
