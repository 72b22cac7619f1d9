#include "posgeom/tokenize/normalizer.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;

TEST(Normalizer, BertCleansIsolatesStripsAndLowers) {
  const auto n = bertNormalizer({});
  EXPECT_EQ(n("Caf\xC3\xA9\t\x01X\xE6\x97\xA5!", true), "cafe x \xE6\x97\xA5 !");
  const auto keep = bertNormalizer({true, false, false, false});
  EXPECT_EQ(keep("Caf\xC3\xA9\xE6\x97\xA5", true), "Caf\xC3\xA9\xE6\x97\xA5");
}

TEST(Normalizer, PrependOnlyAtTheStartOfADocument) {
  const auto n = sequenceNormalizer({prependNormalizer("_"), replaceNormalizer(" ", "_")});
  EXPECT_EQ(n("a b", true), "_a_b");
  EXPECT_EQ(n("a b", false), "a_b");
  EXPECT_EQ(n("", true), "");
}

TEST(Normalizer, SimpleSteps) {
  EXPECT_EQ(lowercaseNormalizer()("ÄB", true), "äb");
  EXPECT_EQ(stripAccentsNormalizer()("é", true), "e");
  EXPECT_EQ(unicodeNormalizer("NFKC")("\xEF\xBC\xA1", true), "A");  // fullwidth A
  EXPECT_EQ(replaceNormalizer("aa", "b")("aaaa a", true), "bb a");
}

}  // namespace
}  // namespace posgeom::testing
