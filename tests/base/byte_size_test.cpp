#include "posgeom/base/byte_size.h"

#include <gtest/gtest.h>

#include "posgeom/base/error.h"

namespace posgeom {
namespace {

TEST(ByteSize, SizesParseAndPrint) {
  EXPECT_EQ(parseByteSize("123", "x"), 123);
  EXPECT_EQ(parseByteSize("800M", "x"), 800LL << 20);
  EXPECT_EQ(parseByteSize("16G", "x"), 16LL << 30);
  EXPECT_EQ(parseByteSize("1.5GiB", "x"), 3LL << 29);
  EXPECT_EQ(parseByteSize("2kb", "x"), 2048);
  for (const char* bad : {"", "G", "-1G", "12Q", "1e30T", "0"}) EXPECT_THROW(parseByteSize(bad, "x"), InputError) << bad;
  EXPECT_EQ(formatBytes(512), "512 B");
  EXPECT_EQ(formatBytes(3LL << 29), "1.5 GiB");
}

TEST(ByteSize, EstimatesPastInt64AreSaidToBeSo) {
  // forward printed a size capped at 9e18 bytes as if it were the size.
  EXPECT_EQ(formatByteEstimate(3.0L * (1LL << 29)), "1.5 GiB");
  EXPECT_EQ(formatByteEstimate(1e19L), "over 8 EiB");
  EXPECT_EQ(formatByteEstimate(1e300L), "over 8 EiB");
}

}  // namespace
}  // namespace posgeom
