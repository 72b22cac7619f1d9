#pragma once
// The devices that device-parameterised tests run on.
#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace posgeom::testing {

// "cpu", and "cuda" where this process sees a CUDA device or POSGEOM_REQUIRE_CUDA=1 asks
// for it: then the CUDA cases run (and fail on a machine without one), so that a GPU run
// counts them instead of leaving them out.
std::vector<std::string> testDevices();
// Whether POSGEOM_REQUIRE_CUDA=1 asks for the CUDA cases (a GPU machine's run).
bool cudaRequired();

// A device parameter as a test name: cpu, cuda.
std::string deviceCaseName(const ::testing::TestParamInfo<std::string>& info);

}  // namespace posgeom::testing
