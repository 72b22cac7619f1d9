#include "test_devices.h"

#include <cstdlib>
#include <string>

#include "posgeom/runtime/device.h"

namespace posgeom::testing {

bool cudaRequired() {
  const char* required = std::getenv("POSGEOM_REQUIRE_CUDA");
  return required && std::string(required) == "1";
}

std::vector<std::string> testDevices() {
  std::vector<std::string> devices{"cpu"};
  if (cudaRequired() || runtime::cudaDeviceCount() > 0) devices.push_back("cuda");
  return devices;
}

std::string deviceCaseName(const ::testing::TestParamInfo<std::string>& info) { return info.param; }

}  // namespace posgeom::testing
