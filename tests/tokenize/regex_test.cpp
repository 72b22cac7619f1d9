#include "posgeom/tokenize/regex.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;

std::vector<std::string> pieces(const Regex& r, const std::string& text) {
  std::vector<std::string> out;
  for (const auto& [b, e] : r.findAll(text)) out.push_back(text.substr(b, e - b));
  return out;
}

TEST(Regex, Gpt2PatternUsesUnicodeClasses) {
  const Regex r(kGpt2SplitPattern, "test");
  EXPECT_EQ(pieces(r, "Hello world's 42 café!!  x"),
            (std::vector<std::string>{"Hello", " world", "'s", " 42", " café", "!!", " ", " x"}));
  EXPECT_EQ(pieces(r, "日本 語"), (std::vector<std::string>{"日本", " 語"}));
}

TEST(Regex, EmptyMatchesDoNotLoop) {
  const Regex r("x*", "test");
  EXPECT_EQ(pieces(r, "axxb"), (std::vector<std::string>{"xx"}));
}

TEST(Regex, BadPatternNamesWhere) {
  try {
    Regex r("(unclosed", "tokenizer.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json: regex does not compile"), std::string::npos);
  }
}

}  // namespace
}  // namespace posgeom::testing
