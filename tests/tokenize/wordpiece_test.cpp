#include "posgeom/tokenize/wordpiece.h"

#include "posgeom/base/error.h"
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

TEST(WordPiece, MissingUnknownTokenIsABadInput) {
  EXPECT_THROW(WordPieceModel({{"a", 0}}, {}, "vocab.txt"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
