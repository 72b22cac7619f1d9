#pragma once
// Where and in what precision a run computes, as typed values: parsed from the command
// line before anything large is read. Torch-free (model::Numerics turns them into Torch's).
#include <cstdint>
#include <string>

namespace posgeom::runtime {

// float64 is the reference: a forward whose hidden states agree with another float64
// implementation (transformers' .double()) to about 1e-12, where two float32 ones differ in
// the sixth digit; what the Python package's exact comparisons with the CLI run in.
enum class ComputeDtype { kFloat32, kBFloat16, kFloat16, kFloat64 };

// float32 | bfloat16 | float16 | float64 (fp32, bf16, fp16, fp64 too); throws InputError naming `where`.
ComputeDtype parseComputeDtype(const std::string& name, const std::string& where = "--dtype");
const char* computeDtypeName(ComputeDtype dtype);
// Bytes of one stored value of weights and activations.
int64_t computeBytes(ComputeDtype dtype);
// bfloat16 and float16: fewer digits than float32 (what a non-finite result is blamed on).
bool isHalfPrecision(ComputeDtype dtype);

struct DeviceSpec {
  enum class Kind { kCpu, kCuda };
  Kind kind = Kind::kCpu;
  int index = -1;  // cuda:N; -1: the current CUDA device

  bool isCuda() const { return kind == Kind::kCuda; }
  std::string str() const;  // "cpu", "cuda", "cuda:1": what --device was given
  bool operator==(const DeviceSpec& o) const { return kind == o.kind && index == o.index; }
  bool operator!=(const DeviceSpec& o) const { return !(*this == o); }
};

// cpu | cuda | cuda:N; throws InputError naming `where`. Syntax only: whether this build
// and machine have the device is requireDevice's question.
DeviceSpec parseDevice(const std::string& text, const std::string& where = "--device");
// Throws InputError when this LibTorch has no CUDA or the machine not the device asked for.
void requireDevice(const DeviceSpec& device, const std::string& where = "--device");
// Whether this LibTorch was built with CUDA (whether or not a GPU is there), and how many
// CUDA devices this process sees (0 on a CPU LibTorch or a machine without a GPU).
bool cudaBuild();
int cudaDeviceCount();
// Makes `device` (cuda:N, N >= 0) this process's current CUDA device: what the caching and
// pinned allocators, the free-memory query and NCCL act on. Called once a run knows its GPU
// (a rank's: LOCAL_RANK's), before its first CUDA call, so that eight ranks make eight
// contexts on eight GPUs, not eight on GPU 0. No-op for the CPU or an index of -1.
void selectCudaDevice(const DeviceSpec& device);
// The current CUDA device, or -1 where no CUDA runtime or device is there.
int currentCudaDevice();

}  // namespace posgeom::runtime
