#include "posgeom/base/process_memory.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <cstring>
#include <fstream>
#include <string>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(ProcessMemory, TheMachineHasMemoryLeftAndNotMoreThanItHas) {
  const auto available = availableHostMemory();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(*available, int64_t{16} << 20);
  EXPECT_LT(*available, int64_t{1} << 50);
}

// This process's address space (VmSize), in bytes.
int64_t addressSpaceBytes() {
  std::ifstream status("/proc/self/status");
  for (std::string key; status >> key;) {
    if (key == "VmSize:") {
      int64_t kib = 0;
      status >> kib;
      return kib * 1024;
    }
    status.ignore(1 << 16, '\n');
  }
  return 0;
}

TEST(ProcessMemory, AnAddressSpaceLimitBoundsWhatIsLeft) {
  // `ulimit -v`: what is left is the limit less the address space already mapped, however
  // much the machine has (a train or forward size check used to miss it).
  rlimit saved{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &saved), 0);
  const int64_t room = int64_t{256} << 20;
  rlimit limited = saved;
  limited.rlim_cur = static_cast<rlim_t>(addressSpaceBytes() + room);
  if (saved.rlim_max != RLIM_INFINITY) {
    ASSERT_LE(limited.rlim_cur, saved.rlim_max);
  }
  ASSERT_EQ(setrlimit(RLIMIT_AS, &limited), 0);
  const auto available = availableHostMemory();
  ASSERT_EQ(setrlimit(RLIMIT_AS, &saved), 0);
  ASSERT_TRUE(available.has_value());
  EXPECT_LE(*available, room);
  EXPECT_GT(*available, room - (int64_t{64} << 20));  // the reading itself maps little
}

TEST(ProcessMemory, PeakGrowsWithTouchedMemoryAndResets) {
  ASSERT_TRUE(resetPeakResident());
  const int64_t before = peakResidentBytes();
  ASSERT_GT(before, 0);
  constexpr std::size_t kBytes = 64u << 20;
  // Mapped directly, not through malloc: a sanitizer's allocator keeps freed blocks.
  void* block = mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(block, MAP_FAILED);
  std::memset(block, 1, kBytes);  // resident only once written
  EXPECT_GE(peakResidentBytes(), before + static_cast<int64_t>(kBytes) * 9 / 10);
  const int64_t high = peakResidentBytes();
  ASSERT_EQ(munmap(block, kBytes), 0);
  ASSERT_TRUE(resetPeakResident());
  EXPECT_LT(peakResidentBytes(), high - static_cast<int64_t>(kBytes) / 2);  // the unmapped block no longer counts
}

}  // namespace
}  // namespace posgeom::testing
