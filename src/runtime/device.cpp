#include "posgeom/runtime/device.h"

#include <ATen/ATen.h>
#include <dlfcn.h>

#include <cstdlib>

#include "posgeom/base/error.h"
#include "posgeom/runtime/torch_device.h"

namespace posgeom::runtime {

ComputeDtype parseComputeDtype(const std::string& name, const std::string& where) {
  if (name == "float32" || name == "fp32") return ComputeDtype::kFloat32;
  if (name == "bfloat16" || name == "bf16") return ComputeDtype::kBFloat16;
  if (name == "float16" || name == "fp16") return ComputeDtype::kFloat16;
  if (name == "float64" || name == "fp64") return ComputeDtype::kFloat64;
  throw InputError(where, "'" + name + "' is not a compute dtype (use float32, bfloat16, float16 or float64)");
}

const char* computeDtypeName(ComputeDtype dtype) {
  switch (dtype) {
    case ComputeDtype::kBFloat16: return "bfloat16";
    case ComputeDtype::kFloat16: return "float16";
    case ComputeDtype::kFloat64: return "float64";
    case ComputeDtype::kFloat32: break;
  }
  return "float32";
}

int64_t computeBytes(ComputeDtype dtype) {
  switch (dtype) {
    case ComputeDtype::kBFloat16:
    case ComputeDtype::kFloat16: return 2;
    case ComputeDtype::kFloat64: return 8;
    case ComputeDtype::kFloat32: break;
  }
  return 4;
}

bool isHalfPrecision(ComputeDtype dtype) { return computeBytes(dtype) == 2; }

std::string DeviceSpec::str() const {
  if (kind == Kind::kCpu) return "cpu";
  return index < 0 ? "cuda" : "cuda:" + std::to_string(index);
}

DeviceSpec parseDevice(const std::string& text, const std::string& where) {
  DeviceSpec d;
  if (text == "cpu") return d;
  if (text.rfind("cuda", 0) == 0) {
    d.kind = DeviceSpec::Kind::kCuda;
    if (text.size() == 4) return d;
    const std::string number = text.substr(5);
    char* end = nullptr;
    const long index = std::strtol(number.c_str(), &end, 10);
    if (text[4] == ':' && !number.empty() && *end == '\0' && index >= 0 && index < 1024) {
      d.index = static_cast<int>(index);
      return d;
    }
  }
  throw InputError(where, "'" + text + "' is not a device (use cpu, cuda or cuda:N)");
}

namespace {

// The CUDA runtime's own count, looked up at run time: the same code for LibTorch 1.13 and
// 2.x, and no CUDA header in a CPU build. Null where no CUDA runtime is loaded.
using GetDeviceCount = int (*)(int*);
GetDeviceCount cudaGetDeviceCountSymbol() {
  return reinterpret_cast<GetDeviceCount>(dlsym(RTLD_DEFAULT, "cudaGetDeviceCount"));
}

}  // namespace

// LibTorch 2.x's hasCUDA() is false on a CUDA build without a GPU; its CUDA runtime is
// loaded all the same.
bool cudaBuild() { return at::hasCUDA() || cudaGetDeviceCountSymbol() != nullptr; }

int cudaDeviceCount() {
  const auto fn = cudaGetDeviceCountSymbol();
  if (!fn) return static_cast<int>(at::getNumGPUs());
  int count = 0;
  return fn(&count) == 0 ? count : 0;
}

void selectCudaDevice(const DeviceSpec& device) {
  if (!device.isCuda() || device.index < 0) return;
  using SetDevice = int (*)(int);
  const auto fn = reinterpret_cast<SetDevice>(dlsym(RTLD_DEFAULT, "cudaSetDevice"));
  if (!fn || fn(device.index) != 0)
    throw InputError("--device", "'" + device.str() + "' could not be made the current CUDA device");
}

int currentCudaDevice() {
  using GetDevice = int (*)(int*);
  const auto fn = reinterpret_cast<GetDevice>(dlsym(RTLD_DEFAULT, "cudaGetDevice"));
  int index = -1;
  return fn && fn(&index) == 0 ? index : -1;
}

void requireDevice(const DeviceSpec& device, const std::string& where) {
  if (!device.isCuda()) return;
  if (!cudaBuild()) throw InputError(where, "'" + device.str() + "' asked for, but this build of LibTorch has no CUDA");
  const int count = cudaDeviceCount();
  if (count == 0) throw InputError(where, "'" + device.str() + "' asked for, but no CUDA device is visible");
  if (device.index >= count)
    throw InputError(where, "'" + device.str() + "' asked for, but this machine has " + std::to_string(count) + " CUDA devices");
}

at::Device torchDevice(const DeviceSpec& device) {
  if (!device.isCuda()) return at::kCPU;
  return device.index < 0 ? at::Device(at::kCUDA) : at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(device.index));
}

at::ScalarType torchDtype(ComputeDtype dtype) {
  switch (dtype) {
    case ComputeDtype::kBFloat16: return at::kBFloat16;
    case ComputeDtype::kFloat16: return at::kHalf;
    case ComputeDtype::kFloat64: return at::kDouble;
    case ComputeDtype::kFloat32: break;
  }
  return at::kFloat;
}

}  // namespace posgeom::runtime
