#include "posgeom/base/process_memory.h"

#include <cstring>
#include <memory>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(ProcessMemory, PeakGrowsWithTouchedMemoryAndResets) {
  ASSERT_TRUE(resetPeakResident());
  const int64_t before = peakResidentBytes();
  ASSERT_GT(before, 0);
  constexpr std::size_t kBytes = 64u << 20;
  {
    auto block = std::make_unique<char[]>(kBytes);
    std::memset(block.get(), 1, kBytes);  // resident only once written
    EXPECT_GE(peakResidentBytes(), before + static_cast<int64_t>(kBytes) * 9 / 10);
    EXPECT_EQ(block[kBytes - 1], 1);
  }
  const int64_t high = peakResidentBytes();
  releaseFreeMemory();
  ASSERT_TRUE(resetPeakResident());
  EXPECT_LT(peakResidentBytes(), high - static_cast<int64_t>(kBytes) / 2);  // the freed block no longer counts
}

}  // namespace
}  // namespace posgeom::testing
