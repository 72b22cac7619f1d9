#pragma once
// Timing work on a device whose kernels run asynchronously (CUDA), and the machine's
// matrix-multiply limit to compare a pass with. Torch-free header.
#include <cstdint>
#include <optional>
#include <string>

#include "posgeom/runtime/device.h"

namespace posgeom::runtime {

// Waits until everything queued on the device has run; nothing to do on the CPU.
void synchronize(const DeviceSpec& device);

// Measured square matrix products n x n x n in the compute dtype on the device: the
// rate of the fastest of `trials` runs of `repeats` products (GFLOP/s, 2 n^3 each).
// A dtype the CPU runs emulated (emulatedOnCpu) is measured in float32, as the model runs it there.
double measureMatmulGflops(const DeviceSpec& device, ComputeDtype dtype, int64_t n, int repeats, int trials);

// The current CUDA device's memory as the CUDA runtime reports it (all processes);
// nullopt where LibTorch brought no CUDA runtime into the process.
struct DeviceMemory {
  int64_t free = 0;
  int64_t total = 0;
};
std::optional<DeviceMemory> cudaMemory();

// What a run takes beyond its model, batch and statistics (LibTorch's libraries and
// state, allocator slack, buffers), for a memory plan: on the CPU the measured peak RSS of
// a tiny model's analyze, rounded up (Debian's LibTorch 184 MiB → 400; the CUDA wheel's
// libraries, run on the CPU, 458 MiB → 640); on a GPU, device memory beyond what
// cudaMemGetInfo already excludes (cuBLAS workspaces, allocator slack): 400 MiB, not yet
// measured.
int64_t runtimeAllowanceBytes(const DeviceSpec& device);

}  // namespace posgeom::runtime
