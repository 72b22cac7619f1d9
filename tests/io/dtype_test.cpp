#include "posgeom/io/dtype.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(DType, NamesAndSizesRoundTrip) {
  const std::vector<std::pair<const char*, size_t>> expected{{"F64", 8}, {"F32", 4}, {"F16", 2}, {"BF16", 2},
                                                             {"I64", 8}, {"I32", 4}, {"U8", 1},  {"BOOL", 1}};
  for (const auto& [name, size] : expected) {
    const auto d = io::parseDType(name);
    ASSERT_TRUE(d.has_value()) << name;
    EXPECT_EQ(io::dtypeName(*d), name);
    EXPECT_EQ(io::dtypeSize(*d), size);
  }
  EXPECT_FALSE(io::parseDType("f32").has_value());
  EXPECT_TRUE(io::isFloating(io::DType::kBF16));
  EXPECT_FALSE(io::isFloating(io::DType::kI64));
}

}  // namespace
}  // namespace posgeom::testing
