#include "posgeom/positions/head_positions.h"

#include <cmath>
#include <stdexcept>
#include <utility>
#include <vector>

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

// T5's buckets from their definition (32 buckets, max distance 128): bidirectional, 16 a
// side, 8 exact, then 8 logarithmic ones up to 128: max_exact + floor(ln(far / 8) / ln 16 x 8).
TEST(HeadPositions, T5BucketsAreExactNearAndLogarithmicFar) {
  const auto both = t5BiasTable(std::vector<double>(32, 0.0), 128, true);
  const std::vector<std::pair<int64_t, int64_t>> bidirectional = {
      {0, 0},   {3, 3},   {-3, 19},  {8, 8},    {12, 9},   // ln 1.5 / ln 16 x 8 = 1.17
      {16, 10}, {-16, 26}, {20, 10}, {-20, 26}, {32, 12},  // 16: exactly 2 (float32 keeps it)
      {64, 14}, {127, 15}, {128, 15}, {1000, 15}, {-1000, 31}};
  for (const auto& [distance, bucket] : bidirectional) EXPECT_EQ(both.bucket(distance), bucket) << distance;
  // Causal: keys after the query all in bucket 0; 16 exact, 16 logarithmic up to 128.
  const auto causal = t5BiasTable(std::vector<double>(32, 0.0), 128, false);
  const std::vector<std::pair<int64_t, int64_t>> one_sided = {{-5, 0}, {5, 5}, {16, 16}, {20, 17}, {32, 21}, {200, 31}};
  for (const auto& [distance, bucket] : one_sided) EXPECT_EQ(causal.bucket(distance), bucket) << distance;
  // The term reads the bucket's value.
  std::vector<double> values(32);
  for (size_t b = 0; b < values.size(); ++b) values[b] = 0.5 * static_cast<double>(b);
  const auto term = relativeBiasTerm(t5BiasTable(values, 128, true));
  EXPECT_EQ(term.at(-20), 13.0);
  EXPECT_EQ(term.at(12), 4.5);
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

// DeBERTa's relative positions: transformers' make_log_bucket_position, by its definition for
// 8 buckets out to 20: within mid = 4 the distance itself, beyond it ceil(log(|d| / 4) / log(19 / 4) x 3) + 4 with d's sign;
// and the rows c2p and p2c read, clamped to the 2 span rows.
TEST(DisentangledRows, LogBucketsAndRowsAsTransformersMakesThem) {
  const positions::DisentangledRows rows{8, 8, 20};
  for (int64_t d = -30; d <= 30; ++d) {
    const int64_t far = std::abs(d);
    const int64_t want =
        far <= 4 ? d : (d < 0 ? -1 : 1) * static_cast<int64_t>(std::ceil(std::log(far / 4.0f) / std::log(19.0f / 4.0f) * 3.0f) + 4.0f);
    EXPECT_EQ(rows.bucket(d), want) << d;
  }
  EXPECT_EQ(rows.bucket(5), 5);   // ceil(log(1.25) / log(4.75) x 3) + 4 = 1 + 4
  EXPECT_EQ(rows.bucket(20), 8);  // ceil(log 5 / log 4.75 x 3) + 4 = ceil(3.10) + 4
  EXPECT_EQ(rows.c2pRow(10, 0), std::min<int64_t>(rows.bucket(10) + 8, 15));
  EXPECT_EQ(rows.p2cRow(0, 10), std::min<int64_t>(8 - rows.bucket(10), 15));
  EXPECT_EQ(rows.c2pRow(0, 30), 0);  // clamped below
  // The tables for a window: every (n, i) as the two functions give it.
  const auto tables = rows.tables(30);
  for (int64_t n = 0; n < 30; ++n)
    for (int64_t i = 0; i < 30; ++i) {
      EXPECT_EQ(tables.c2p[static_cast<std::size_t>(n * 30 + i)], rows.c2pRow(n, i));
      EXPECT_EQ(tables.p2c[static_cast<std::size_t>(n * 30 + i)], rows.p2cRow(n, i));
    }
  const positions::DisentangledRows plain{12, 0, 12};
  EXPECT_EQ(plain.bucket(-17), -17);
  EXPECT_EQ(plain.c2pRow(17, 0), 23);
}

TEST(HeadPositions, RotateHalfIsTheDefaultPairing) {
  EXPECT_FALSE(Rope{}.interleaved());
  EXPECT_TRUE(Rope{}.inverse_frequencies.empty());
}

}  // namespace
}  // namespace posgeom::testing
