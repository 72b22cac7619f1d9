#include "posgeom/base/process_memory.h"

#include <sys/mman.h>

#include <cstring>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(ProcessMemory, TheMachineHasMemoryLeftAndNotMoreThanItHas) {
  const auto available = availableHostMemory();
  ASSERT_TRUE(available.has_value());
  EXPECT_GT(*available, int64_t{16} << 20);
  EXPECT_LT(*available, int64_t{1} << 50);
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
