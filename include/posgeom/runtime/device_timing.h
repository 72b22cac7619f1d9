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

}  // namespace posgeom::runtime
