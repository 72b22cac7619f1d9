#include "posgeom/runtime/cpu_features.h"

#include <fstream>
#include <sstream>

namespace posgeom::runtime {

bool flagsComputeBfloat16(const std::string& flags) {
  std::istringstream words(flags);
  for (std::string word; words >> word;)
    if (word == "avx512_bf16" || word == "amx_bf16") return true;
  return false;
}

bool cpuComputesBfloat16() {
  static const bool native = [] {
    std::ifstream cpuinfo("/proc/cpuinfo");
    for (std::string line; std::getline(cpuinfo, line);)
      if (line.rfind("flags", 0) == 0) return flagsComputeBfloat16(line.substr(line.find(':') + 1));
    return false;
  }();
  return native;
}

bool emulatedOnCpu(ComputeDtype dtype) {
  return dtype == ComputeDtype::kFloat16 || (dtype == ComputeDtype::kBFloat16 && !cpuComputesBfloat16());
}

}  // namespace posgeom::runtime
