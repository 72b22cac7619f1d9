#include "posgeom/positions/head_positions.h"

#include <stdexcept>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::positions;

TEST(HeadPositions, NoTermAddsNothing) {
  const AdditiveTerm none;
  EXPECT_TRUE(none.none());
  for (int64_t d : {-3, 0, 7}) EXPECT_EQ(none.at(d), 0.0);
}

TEST(HeadPositions, AlibiPenalisesDistanceLinearly) {
  const auto term = alibiTerm(0.25);
  EXPECT_FALSE(term.none());
  EXPECT_EQ(term.at(0), 0.0);
  EXPECT_EQ(term.at(4), -1.0);
  EXPECT_EQ(term.at(-2), 0.5);  // a future key (bidirectional): a bonus
}

TEST(HeadPositions, RelativeTableClipsTheSignedDistance) {
  // Buckets for d = -2 .. 2; farther distances share the last bucket on their side.
  const auto term = relativeBiasTerm({{-0.2, -0.1, 0.5, 0.3, 0.1}, 2});
  EXPECT_EQ(term.table.bucket(-7), 0);
  EXPECT_EQ(term.table.bucket(0), 2);
  EXPECT_EQ(term.table.bucket(9), 4);
  EXPECT_EQ(term.at(0), 0.5);
  EXPECT_EQ(term.at(1), 0.3);
  EXPECT_EQ(term.at(-1), -0.1);
  EXPECT_EQ(term.at(40), 0.1);
  EXPECT_EQ(term.at(-40), -0.2);
}

TEST(HeadPositions, ATableOfTheWrongSizeThrows) {
  const auto term = relativeBiasTerm({{0.0, 1.0}, 2});
  EXPECT_THROW(term.at(2), std::out_of_range);
}

TEST(HeadPositions, BlockHeadsShareAllButTheirTerm) {
  BlockPositions block;
  block.shared.mask = {true, 4};
  block.shared.scale = 0.5;
  block.shared.logit_cap = 30;
  block.shared.rope = {{1.0, 0.1}, RopePairing::kInterleaved};
  EXPECT_FALSE(block.hasAdditive());
  EXPECT_TRUE(block.head(3).additive.none());  // no per-head terms: any head takes the shared one
  block.per_head = {AdditiveTerm{}, alibiTerm(0.5)};
  EXPECT_TRUE(block.hasAdditive());
  const auto head = block.head(1);
  EXPECT_EQ(head.mask.window, 4);
  EXPECT_EQ(head.scale, 0.5);
  EXPECT_EQ(head.logit_cap, 30);
  EXPECT_TRUE(head.rope.interleaved());
  EXPECT_EQ(head.rope.inverse_frequencies.size(), 2u);
  EXPECT_EQ(head.additive.slope, 0.5);
  EXPECT_TRUE(block.head(0).additive.none());
  EXPECT_THROW(block.head(2), std::out_of_range);
}

TEST(HeadPositions, RotateHalfIsTheDefaultPairing) {
  EXPECT_FALSE(Rope{}.interleaved());
  EXPECT_TRUE(Rope{}.inverse_frequencies.empty());
}

}  // namespace
}  // namespace posgeom::testing
