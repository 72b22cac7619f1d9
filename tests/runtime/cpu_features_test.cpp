#include "posgeom/runtime/cpu_features.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <iterator>
#include <string>

namespace posgeom::runtime {
namespace {

TEST(CpuFeatures, Bfloat16InHardwareIsAvx512Bf16OrAmx) {
  EXPECT_TRUE(flagsComputeBfloat16("fpu sse avx2 avx512f avx512_bf16 avx512_vnni"));
  EXPECT_TRUE(flagsComputeBfloat16(" amx_tile amx_bf16 amx_int8"));
  EXPECT_FALSE(flagsComputeBfloat16("fpu sse fma avx avx2"));
  EXPECT_FALSE(flagsComputeBfloat16("avx512f avx512bw avx512_vnni"));  // AVX-512 without its bf16 part
  EXPECT_FALSE(flagsComputeBfloat16("avx512_bf16x"));                 // whole words only
  EXPECT_FALSE(flagsComputeBfloat16(""));
}

TEST(CpuFeatures, ADescriptionNamesTheModelAndTheVectorFeaturesInOrder) {
  const auto d = describeCpu("processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu sse2 fma avx2 avx bmi2 avx512_bf16x\n"
                             "processor\t: 1\nmodel name\t: other\nflags\t\t: avx512f\n");
  EXPECT_EQ(d.model, "AMD EPYC 7B13");
  EXPECT_EQ(d.features, (std::vector<std::string>{"avx", "avx2", "fma"}));  // the first processor's; whole words
  EXPECT_TRUE(describeCpu("").features.empty());
  EXPECT_EQ(describeCpu("").model, "");
}

// This machine's answer is what its /proc/cpuinfo says, and decides bfloat16's path.
TEST(CpuFeatures, ThisCpuAndTheEmulatedDtypes) {
  std::ifstream cpuinfo("/proc/cpuinfo");
  const std::string text((std::istreambuf_iterator<char>(cpuinfo)), std::istreambuf_iterator<char>());
  const bool listed = text.find(" avx512_bf16") != std::string::npos || text.find(" amx_bf16") != std::string::npos;
  EXPECT_EQ(cpuComputesBfloat16(), listed);
  EXPECT_TRUE(emulatedOnCpu(ComputeDtype::kFloat16));
  EXPECT_FALSE(emulatedOnCpu(ComputeDtype::kFloat32));
  EXPECT_EQ(emulatedOnCpu(ComputeDtype::kBFloat16), !listed);
  const auto& cpu = thisCpu();
  for (const auto& feature : cpu.features) EXPECT_NE(text.find(" " + feature), std::string::npos) << feature;
  EXPECT_EQ(std::find(cpu.features.begin(), cpu.features.end(), "avx512_bf16") != cpu.features.end(),
            text.find(" avx512_bf16") != std::string::npos);
}

}  // namespace
}  // namespace posgeom::runtime
