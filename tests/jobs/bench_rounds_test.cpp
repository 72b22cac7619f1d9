#include "posgeom/jobs/bench_rounds.h"

#include <gtest/gtest.h>

#include <map>

namespace posgeom::testing {
namespace {

using jobs::BenchPass;
using jobs::RoundSeconds;

TEST(BenchRounds, EveryPassTakesEveryPlaceInTurn) {
  std::map<BenchPass, std::map<int, int>> places;  // pass -> place -> count
  for (int round = 0; round < 6; ++round) {
    const auto order = jobs::passOrder(round);
    for (int place = 0; place < 3; ++place) ++places[order[static_cast<std::size_t>(place)]][place];
  }
  ASSERT_EQ(places.size(), 3u);
  for (const auto& [pass, counts] : places)
    for (int place = 0; place < 3; ++place) EXPECT_EQ(counts.at(place), 2) << static_cast<int>(pass) << " at " << place;
}

TEST(BenchRounds, RatesOfSteadyRoundsAreTokensOverSeconds) {
  const auto rates = jobs::ratesFromRounds({{2.0, 2.2, 2.5}, {2.0, 2.2, 2.5}}, 1000);
  EXPECT_DOUBLE_EQ(rates.forward_tokens_per_s, 500);
  EXPECT_DOUBLE_EQ(rates.analyze_tokens_per_s, 1000 / 2.2);
  EXPECT_DOUBLE_EQ(rates.analyze_heads_tokens_per_s, 1000 / 2.5);
}

TEST(BenchRounds, OneStalledPassOrADriftingMachineDoesNotMoveTheResult) {
  // Round 2's analyze pass stalled; the machine ran at half speed during round 3.
  const std::vector<RoundSeconds> rounds = {{2.0, 2.2, 2.4}, {2.0, 9.0, 2.4}, {4.0, 4.4, 4.8}};
  const auto rates = jobs::ratesFromRounds(rounds, 1000);
  EXPECT_DOUBLE_EQ(rates.forward_tokens_per_s, 500);
  EXPECT_NEAR(rates.forward_tokens_per_s / rates.analyze_tokens_per_s, 1.1, 1e-12);
  EXPECT_NEAR(rates.forward_tokens_per_s / rates.analyze_heads_tokens_per_s, 1.2, 1e-12);
}

TEST(BenchRounds, TheAccumulatorsShareIsTheirTimeOverTheRestOfTheSamePass) {
  // Round 2 drifted to half speed, its forward pass included: the ratios of passes
  // move, the share measured inside each pass does not.
  std::vector<RoundSeconds> rounds(3);
  rounds[0] = {2.0, 2.2, 2.4, 0.2, 0.4};
  rounds[1] = {2.0, 4.4, 4.8, 0.4, 0.8};
  rounds[2] = {2.0, 2.2, 2.4, 0.2, 0.4};
  const auto rates = jobs::ratesFromRounds(rounds, 1000);
  EXPECT_NEAR(rates.analyze_accumulator_share, 0.1, 1e-12);
  EXPECT_NEAR(rates.analyze_heads_accumulator_share, 0.2, 1e-12);
  rounds[0].analyze_accumulating = rounds[1].analyze_accumulating = rounds[2].analyze_accumulating = 0;
  EXPECT_EQ(jobs::ratesFromRounds(rounds, 1000).analyze_accumulator_share, 0);  // not timed
}

TEST(BenchRounds, AnEvenNumberOfRoundsTakesTheMiddleTwo) {
  const auto rates = jobs::ratesFromRounds({{1.0, 1.0, 1.0}, {2.0, 2.0, 2.0}, {3.0, 3.0, 3.0}, {9.0, 9.0, 9.0}}, 10);
  EXPECT_DOUBLE_EQ(rates.forward_tokens_per_s, 10 / 2.5);
  EXPECT_DOUBLE_EQ(rates.analyze_tokens_per_s, 10 / 2.5);
  EXPECT_THROW(jobs::ratesFromRounds({}, 10), std::invalid_argument);
}

}  // namespace
}  // namespace posgeom::testing
