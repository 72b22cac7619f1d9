#include "posgeom/tokenize/wordpiece.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "posgeom/base/error.h"
#include "captured_log.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;


TEST(WordPiece, LongestMatchWithContinuationPrefix) {
  const WordPieceModel m({{"[UNK]", 0}, {"un", 1}, {"##aff", 2}, {"##able", 3}, {"una", 4}}, {}, "t");
  std::vector<int32_t> out;
  EncodeStats stats;
  m.encode("unaffable", out, stats);  // "una" then "##ffable" fails: the whole word is [UNK]
  EXPECT_EQ(out, (std::vector<int32_t>{0}));
  const WordPieceModel m2({{"[UNK]", 0}, {"un", 1}, {"##aff", 2}, {"##able", 3}}, {}, "t");
  out.clear();
  m2.encode("unaffable", out, stats);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 3}));
}

TEST(WordPiece, NeverSplitsACodePoint) {
  const WordPieceModel m({{"[UNK]", 0}, {"é", 1}, {"##é", 2}}, {}, "t");
  std::vector<int32_t> out;
  EncodeStats stats;
  m.encode("éé", out, stats);
  EXPECT_EQ(out, (std::vector<int32_t>{1, 2}));
}

// A text taken whole as one word (a tokenizer.json without a pre-tokenizer) became one
// [UNK] without a word; as in Hugging Face it still does, but the model says so once.
TEST(WordPiece, WordsTooLongToEncodeAreWarnedOnceWithTheirCount) {
  CapturedLog log;
  {
    WordPieceOptions options;
    options.max_chars_per_word = 5;
    const WordPieceModel m({{"[UNK]", 0}, {"a", 1}, {"##a", 2}}, options, "tokenizer.json");
    std::vector<int32_t> out;
    EncodeStats stats;
    m.encode("aaaaa", out, stats);      // 5 characters: encoded
    m.encode("aaaaaaaa", out, stats);   // 8: one [UNK]
    m.encode("\xC3\xA9\xC3\xA9\xC3\xA9", out, stats);  // 3 characters in 6 bytes: short enough (and unknown)
    m.encode("aaaaaaaa", out, stats);   // again, from the cache
    EXPECT_EQ(out, (std::vector<int32_t>{1, 2, 2, 2, 2, 0, 0, 0}));
  }
  const auto text = log.str();
  EXPECT_NE(text.find("[warning] tokenizer.json: 2 words of the text read are longer than max_input_chars_per_word 5 (16 "
                      "characters in all) and each became one '[UNK]' token"),
            std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

TEST(WordPiece, MissingUnknownTokenIsABadInput) {
  EXPECT_THROW(WordPieceModel({{"a", 0}}, {}, "vocab.txt"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
