#include "posgeom/tokenize/unicode.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;

TEST(Unicode, DecodesAndFlagsInvalidBytes) {
  const std::string s = "a\xC3\xA9\xFF";
  std::size_t pos = 0;
  EXPECT_EQ(decodeUtf8(s, pos), 'a');
  EXPECT_EQ(decodeUtf8(s, pos), 0xE9);
  EXPECT_EQ(decodeUtf8(s, pos), -1);
  EXPECT_EQ(pos, s.size());
}

TEST(Unicode, SanitizeCountsReplacements) {
  std::size_t n = 0;
  EXPECT_EQ(sanitizeUtf8("x\xC3(y\xED\xA0\x80", n), "x\xEF\xBF\xBD(y\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD");
  EXPECT_EQ(n, 4u);  // a truncated sequence and the three bytes of an encoded surrogate
  EXPECT_TRUE(isValidUtf8("caf\xC3\xA9"));
  EXPECT_FALSE(isValidUtf8("\xC0\xAF"));  // overlong
}

TEST(Unicode, NormalFormsAndAccents) {
  EXPECT_EQ(normalizeNfd("\xC3\xA9"), "e\xCC\x81");
  EXPECT_EQ(normalizeNfc("e\xCC\x81"), "\xC3\xA9");
  EXPECT_EQ(normalizeNfkc("\xEF\xAC\x81"), "fi");  // the fi ligature
  EXPECT_EQ(stripAccents("Ña\xC3\xAFve"), "Naive");
  EXPECT_EQ(lowercase("ÀÉÎ ABC"), "àéî abc");
}

TEST(Unicode, BertCharacterClasses) {
  EXPECT_TRUE(isWhitespace(0x3000));
  EXPECT_FALSE(isWhitespace('x'));
  EXPECT_TRUE(isControl(0x200B) || isControl(0x0007));
  EXPECT_FALSE(isControl('\n'));
  EXPECT_TRUE(isPunctuation('$'));     // ASCII symbols count as punctuation for BERT
  EXPECT_TRUE(isPunctuation(0x2014));  // em dash, category Pd
  EXPECT_FALSE(isPunctuation('a'));
  EXPECT_TRUE(isCjk(0x65E5));
  EXPECT_FALSE(isCjk(0x3042));  // hiragana is not in BERT's CJK blocks
}

}  // namespace
}  // namespace posgeom::testing
