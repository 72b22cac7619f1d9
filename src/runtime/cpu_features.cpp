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

CpuDescription describeCpu(const std::string& cpuinfo) {
  static const char* const kFeatures[] = {"avx",         "avx2",        "fma",      "avx512f",  "avx512bw",
                                          "avx512_vnni", "avx512_bf16", "amx_tile", "amx_bf16", "amx_int8"};
  CpuDescription d;
  std::istringstream lines(cpuinfo);
  std::string flags;
  bool have_model = false, have_flags = false;
  for (std::string line; std::getline(lines, line) && !(have_model && have_flags);) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    auto value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    if (!have_model && line.rfind("model name", 0) == 0) d.model = value, have_model = true;
    if (!have_flags && line.rfind("flags", 0) == 0) flags = " " + value + " ", have_flags = true;
  }
  for (const char* feature : kFeatures)
    if (flags.find(" " + std::string(feature) + " ") != std::string::npos) d.features.emplace_back(feature);
  return d;
}

const CpuDescription& thisCpu() {
  static const CpuDescription cpu = [] {
    std::ifstream file("/proc/cpuinfo");
    std::ostringstream text;
    text << file.rdbuf();
    return describeCpu(text.str());
  }();
  return cpu;
}

bool emulatedOnCpu(ComputeDtype dtype) {
  return dtype == ComputeDtype::kFloat16 || (dtype == ComputeDtype::kBFloat16 && !cpuComputesBfloat16());
}

}  // namespace posgeom::runtime
