#include "posgeom/model/numerics.h"

#include <mutex>

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/runtime/cpu_features.h"
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
  // float16 on the CPU, and bfloat16 on a CPU without it in hardware: float32 arithmetic,
  // every stored value rounded.
  const bool emulated = n.device.is_cpu() && runtime::emulatedOnCpu(dtype);
  n.dtype = emulated ? at::kFloat : n.rounding;
  if (emulated && dtype == runtime::ComputeDtype::kBFloat16) {
    static std::once_flag said;
    std::call_once(said, [] {
      log::info("bfloat16 on this CPU (no AVX512-BF16 or AMX): float32 products, every stored value rounded to "
                "bfloat16, at about float32's speed (bfloat16 kernels without the hardware ran 13x slower)");
    });
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
