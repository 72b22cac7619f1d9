#pragma once
// What this machine's CPU computes in hardware, from its flags (Linux /proc/cpuinfo), and
// so which compute dtypes the CPU runs emulated. Torch-free.
#include <string>
#include <vector>

#include "posgeom/runtime/device.h"

namespace posgeom::runtime {

// A "flags" line of /proc/cpuinfo that names AVX512-BF16 or AMX-BF16: bfloat16 products in hardware.
bool flagsComputeBfloat16(const std::string& flags);
// This CPU's, read once; false where no flags can be read.
bool cpuComputesBfloat16();
// Whether `dtype` runs on the CPU as float32 arithmetic with every stored value rounded to
// it: float16 always (LibTorch has no fast float16 products on the CPU), bfloat16 on a CPU
// without bf16 in hardware (an AVX2-only EPYC ran GPT-2-small's analyze 13x slower in
// bfloat16 than in float32).
bool emulatedOnCpu(ComputeDtype dtype);

// What a result computed on this CPU can depend on: its model name, and the vector
// features (of AVX, AVX2, FMA, AVX-512 and its bf16/VNNI parts, AMX) that choose which of
// the math libraries' kernels run, and so the order of a floating-point sum. A training run
// records it (training.json), so that its result can be traced to its machine: the addition
// model learned on an AVX-512 Xeon and not on an AVX2-only EPYC with the same seed.
struct CpuDescription {
  std::string model;                  // "model name"; "" where none is listed
  std::vector<std::string> features;  // in the order above, those present
};
// From /proc/cpuinfo's text: its first processor.
CpuDescription describeCpu(const std::string& cpuinfo);
// This machine's, read once.
const CpuDescription& thisCpu();

}  // namespace posgeom::runtime
