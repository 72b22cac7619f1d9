#include "posgeom/base/edit_distance.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(EditDistance, CountsInsertionsDeletionsAndSubstitutions) {
  EXPECT_EQ(editDistance("", ""), 0u);
  EXPECT_EQ(editDistance("seq-len", "seq-len"), 0u);
  EXPECT_EQ(editDistance("", "abc"), 3u);
  EXPECT_EQ(editDistance("abc", ""), 3u);
  EXPECT_EQ(editDistance("modell", "model"), 1u);          // a deletion
  EXPECT_EQ(editDistance("relative_nrm", "relative_norm"), 1u);  // an insertion
  EXPECT_EQ(editDistance("seq_len", "seq-len"), 1u);       // a substitution
  EXPECT_EQ(editDistance("kitten", "sitting"), 3u);        // the textbook case
  EXPECT_EQ(editDistance("flaw", "lawn"), 2u);
  EXPECT_EQ(editDistance("lawn", "flaw"), 2u);             // symmetric
}

}  // namespace
}  // namespace posgeom::testing
