#include "posgeom/base/process_memory.h"

#include <malloc.h>

#include <fstream>
#include <string>

namespace posgeom {

int64_t peakResidentBytes() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmHWM:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0;
}

void releaseFreeMemory() {
#if defined(__GLIBC__)
  malloc_trim(0);
#endif
}

bool resetPeakResident() {
  std::ofstream clear("/proc/self/clear_refs");
  clear << "5";  // resets VmHWM
  clear.flush();
  return static_cast<bool>(clear);
}

}  // namespace posgeom
