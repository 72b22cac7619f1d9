#include "posgeom/runtime/device_timing.h"

#include <dlfcn.h>

#include <ATen/ATen.h>
#include <ATen/detail/CUDAHooksInterface.h>
#include <algorithm>
#include <chrono>

#include "posgeom/runtime/cpu_features.h"
#include "posgeom/runtime/torch_device.h"

namespace posgeom::runtime {

void synchronize(const DeviceSpec& device) {
  if (device.isCuda()) at::detail::getCUDAHooks().deviceSynchronize(device.index < 0 ? 0 : device.index);
}

double measureMatmulGflops(const DeviceSpec& device, ComputeDtype dtype, int64_t n, int repeats, int trials) {
  const bool emulated = !device.isCuda() && emulatedOnCpu(dtype);
  const auto options = at::TensorOptions().dtype(emulated ? at::kFloat : torchDtype(dtype)).device(torchDevice(device));
  const auto a = at::randn({n, n}, options), b = at::randn({n, n}, options);
  auto c = at::mm(a, b);  // warm-up: kernels chosen, memory in place
  synchronize(device);
  double best = 0;
  for (int t = 0; t < trials; ++t) {
    const auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < repeats; ++r) at::mm_out(c, a, b);
    synchronize(device);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::max(best, 2.0 * static_cast<double>(n * n) * static_cast<double>(n) * repeats / seconds / 1e9);
  }
  return best;
}

std::optional<DeviceMemory> cudaMemory() {
  // Looked up at run time: no link-time dependency, one file for the CPU and CUDA builds.
  using MemGetInfo = int (*)(std::size_t*, std::size_t*);
  auto* fn = reinterpret_cast<MemGetInfo>(dlsym(RTLD_DEFAULT, "cudaMemGetInfo"));
  std::size_t free_bytes = 0, total = 0;
  if (!fn || fn(&free_bytes, &total) != 0) return std::nullopt;
  return DeviceMemory{static_cast<int64_t>(free_bytes), static_cast<int64_t>(total)};
}

int64_t runtimeAllowanceBytes(const DeviceSpec& device) {
  constexpr int64_t kMiB = int64_t{1} << 20;
  if (device.isCuda()) return 400 * kMiB;
  return (cudaBuild() ? 640 : 400) * kMiB;
}

}  // namespace posgeom::runtime
