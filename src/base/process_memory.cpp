#include "posgeom/base/process_memory.h"

#include <malloc.h>
#include <sys/resource.h>

#include <fstream>
#include <optional>
#include <string>

namespace posgeom {
namespace {

std::optional<int64_t> readNumber(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

// A /proc/self/status field in bytes (kB there), or 0.
int64_t statusBytes(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == field) {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0;
}

}  // namespace

std::optional<int64_t> availableHostMemory() {
  auto available = memAvailable();
  // A container's limit is what counts when it is below the machine's.
  const auto limit = readNumber("/sys/fs/cgroup/memory.max"), used = readNumber("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const int64_t room = *limit - *used;
    if (!available || room < *available) available = room;
  }
  // Under `ulimit -v` the address space left is the limit: a size check that ignored it
  // let an allocation fail as an internal error instead of refusing up front.
  rlimit as{};
  if (::getrlimit(RLIMIT_AS, &as) == 0 && as.rlim_cur != RLIM_INFINITY) {
    const int64_t room = static_cast<int64_t>(as.rlim_cur) - statusBytes("VmSize:");
    if (!available || room < *available) available = room;
  }
  return available;
}

int64_t peakResidentBytes() { return statusBytes("VmHWM:"); }
int64_t residentBytes() { return statusBytes("VmRSS:"); }

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
