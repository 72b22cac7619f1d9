#include "posgeom/tokenize/pre_tokenizer.h"

#include <set>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;

std::vector<std::string> run(const PreTokenizer& p, const std::string& text, bool at_start = true) {
  std::vector<std::string> out;
  p(text, at_start, out);
  return out;
}

TEST(PreTokenizer, ByteToUnicodeIsABijectionOntoPrintables) {
  const auto& table = byteToUnicode();
  std::set<std::string> distinct(table.begin(), table.end());
  EXPECT_EQ(distinct.size(), 256u);
  EXPECT_EQ(table[' '], "\xC4\xA0");  // Ġ
  EXPECT_EQ(table['A'], "A");
  EXPECT_EQ(table['\n'], "\xC4\x8A");  // Ċ
}

TEST(PreTokenizer, ByteLevelSplitsAndMaps) {
  const auto p = byteLevelPreTokenizer(false, std::make_shared<Regex>(kGpt2SplitPattern, "t"));
  EXPECT_EQ(run(p, "a b"), (std::vector<std::string>{"a", "\xC4\xA0" "b"}));
  const auto prefixed = byteLevelPreTokenizer(true, nullptr);
  EXPECT_EQ(run(prefixed, "a b"), (std::vector<std::string>{"\xC4\xA0" "a\xC4\xA0" "b"}));
}

TEST(PreTokenizer, BertSplitsWhitespaceAndPunctuation) {
  EXPECT_EQ(run(bertPreTokenizer(), " don't  stop—now "), (std::vector<std::string>{"don", "'", "t", "stop", "—", "now"}));
}

TEST(PreTokenizer, MetaspacePrependsOnlyAtStart) {
  const auto p = metaspacePreTokenizer("_", true, true);
  EXPECT_EQ(run(p, "a b"), (std::vector<std::string>{"_a", "_b"}));
  EXPECT_EQ(run(p, "a b", false), (std::vector<std::string>{"a", "_b"}));
  EXPECT_EQ(run(metaspacePreTokenizer("_", false, false), "a b"), (std::vector<std::string>{"a_b"}));
}

TEST(PreTokenizer, RegexSplitBehaviours) {
  const auto digits = std::make_shared<Regex>("[0-9]", "t");
  EXPECT_EQ(run(regexSplitPreTokenizer(digits, SplitBehavior::kIsolated), "a1b2"), (std::vector<std::string>{"a", "1", "b", "2"}));
  EXPECT_EQ(run(regexSplitPreTokenizer(digits, SplitBehavior::kRemoved), "a1b2"), (std::vector<std::string>{"a", "b"}));
  EXPECT_EQ(run(regexSplitPreTokenizer(digits, SplitBehavior::kMergedWithPrevious), "a1b2"), (std::vector<std::string>{"a1", "b2"}));
  EXPECT_EQ(run(regexSplitPreTokenizer(digits, SplitBehavior::kMergedWithNext), "a1b2c"), (std::vector<std::string>{"a", "1b", "2c"}));
}

TEST(PreTokenizer, SequenceAppliesStepsInOrder) {
  const auto p = sequencePreTokenizer({whitespaceSplitPreTokenizer(),
                                       regexSplitPreTokenizer(std::make_shared<Regex>("-", "t"), SplitBehavior::kRemoved)});
  EXPECT_EQ(run(p, "a-b c"), (std::vector<std::string>{"a", "b", "c"}));
}

}  // namespace
}  // namespace posgeom::testing
