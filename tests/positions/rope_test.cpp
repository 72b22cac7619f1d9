#include "posgeom/positions/rope.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {

// RoPE's frequencies from their definitions (transformers' modeling_rope_utils): plain
// theta^(-2j/r) over the rotary dims r; linear divides them by the factor; dynamic NTK raises
// the base by (factor T / max - (factor - 1))^(r / (r - 2)) once T passes max; llama3 keeps
// wavelengths under context / high_freq_factor, slows those over context / low_freq_factor by
// the factor, and blends linearly in 1 / wavelength between.
TEST(Rope, InverseFrequenciesFollowTheirDefinitions) {
  positions::RopeConfig rope;
  rope.theta = 100.0;
  const auto plain = positions::ropeInverseFrequencies(rope, 8, 16, 10);
  ASSERT_EQ(plain.size(), 4u);
  for (int j = 0; j < 4; ++j) EXPECT_NEAR(plain[static_cast<size_t>(j)], std::pow(100.0, -2.0 * j / 8), 1e-15);
  rope.partial_rotary_factor = 0.5;  // GPT-NeoX: the first 4 of 8 dims turn
  const auto partial = positions::ropeInverseFrequencies(rope, 8, 16, 10);
  ASSERT_EQ(partial.size(), 2u);
  EXPECT_NEAR(partial[1], std::pow(100.0, -2.0 / 4), 1e-15);
  rope.partial_rotary_factor = 1.0;
  rope.type = "linear";
  rope.factor = 4.0;
  EXPECT_NEAR(positions::ropeInverseFrequencies(rope, 8, 16, 10)[2], plain[2] / 4.0, 1e-15);
  rope.type = "dynamic";
  rope.factor = 2.0;
  EXPECT_EQ(positions::ropeInverseFrequencies(rope, 8, 16, 16), plain);  // not past max: unchanged
  const double base = 100.0 * std::pow(2.0 * 24 / 16 - 1.0, 8.0 / 6.0);
  EXPECT_NEAR(positions::ropeInverseFrequencies(rope, 8, 16, 24)[3], std::pow(base, -6.0 / 8), 1e-15);
  rope.type = "llama3";
  rope.theta = 10000.0;
  rope.factor = 8.0;
  rope.low_freq_factor = 1.0;
  rope.high_freq_factor = 4.0;
  rope.original_max_positions = 64;  // wavelengths under 16 kept, over 64 slowed 8 times
  rope.type = "default";
  const auto unscaled = positions::ropeInverseFrequencies(rope, 12, 256, 24);
  rope.type = "llama3";
  const auto scaled = positions::ropeInverseFrequencies(rope, 12, 256, 24);
  int kept = 0, slowed = 0, blended = 0;
  for (size_t j = 0; j < scaled.size(); ++j) {
    const double wavelength = 2 * M_PI / unscaled[j];
    if (wavelength < 16) {
      EXPECT_EQ(scaled[j], unscaled[j]);
      ++kept;
    } else if (wavelength > 64) {
      EXPECT_NEAR(scaled[j], unscaled[j] / 8, 1e-15);
      ++slowed;
    } else {
      const double smooth = (64 / wavelength - 1.0) / 3.0;
      EXPECT_NEAR(scaled[j], (1 - smooth) * unscaled[j] / 8 + smooth * unscaled[j], 1e-15);
      ++blended;
    }
  }
  EXPECT_EQ(kept, 1);
  EXPECT_EQ(blended, 1);
  EXPECT_EQ(slowed, 4);
}

// YaRN (transformers' _compute_yarn_parameters): pair j turns T_ctx f_j / 2pi times over the
// pretraining context; the pairs' indices where that is beta_fast (32) and beta_slow (1)
// times, d ln(T_ctx / (2 pi beta)) / (2 ln theta), rounded out, bound a ramp in j: below it a
// pair is kept, above it slowed by the factor, between a linear mix. Here (theta 100, 12
// dims, a context of 16) the ends are -3.3 and 1.22: 0 and 2, so pair 1 is half and half;
// unrounded, pair 1 keeps 1 - 1 / 1.22 of itself.
// longrope (transformers' _compute_longrope_parameters): pair j's theta^(-2j/r) divided by
// short_factor[j] for windows up to the pretraining context, by long_factor[j] past it.
TEST(Rope, LongropeDividesEachPairByTheFactorsOfTheWindowsLength) {
  positions::RopeConfig rope;
  rope.theta = 100.0;
  rope.type = "longrope";
  rope.original_max_positions = 16;
  rope.short_factor = {1.0, 1.5, 2.0};
  rope.long_factor = {1.0, 4.0, 9.0};
  for (const int64_t t : {16, 17}) {
    const auto inv = positions::ropeInverseFrequencies(rope, 6, 64, t);
    const auto& factors = t > 16 ? rope.long_factor : rope.short_factor;
    ASSERT_EQ(inv.size(), 3u);
    for (int j = 0; j < 3; ++j)
      EXPECT_NEAR(inv[static_cast<size_t>(j)], 1.0 / (factors[static_cast<size_t>(j)] * std::pow(100.0, 2.0 * j / 6)), 1e-15) << t;
  }
}

TEST(Rope, YarnKeepsFastPairsSlowsSlowOnesAndRampsBetween) {
  positions::RopeConfig rope;
  rope.theta = 100.0;
  const auto plain = positions::ropeInverseFrequencies(rope, 12, 64, 24);
  rope.type = "yarn";
  rope.factor = 4.0;
  rope.original_max_positions = 16;
  const auto yarn = positions::ropeInverseFrequencies(rope, 12, 64, 24);
  ASSERT_EQ(yarn.size(), 6u);
  EXPECT_EQ(yarn[0], plain[0]);
  EXPECT_NEAR(yarn[1], 0.5 * plain[1] + 0.5 * plain[1] / 4, 1e-15);
  for (size_t j = 2; j < 6; ++j) EXPECT_NEAR(yarn[j], plain[j] / 4, 1e-15) << j;
  // transformers' own numbers for this config (float32): pairs 1 and 2.
  EXPECT_NEAR(yarn[1], 0.2900993227958679, 1e-7);
  EXPECT_NEAR(yarn[2], 0.0538608618080616, 1e-7);
  rope.truncate = false;
  const double high = 12 * std::log(16 / (2 * M_PI)) / (2 * std::log(100.0));
  const double kept = 1 - 1 / high;
  EXPECT_NEAR(positions::ropeInverseFrequencies(rope, 12, 64, 24)[1], kept * plain[1] + (1 - kept) * plain[1] / 4, 1e-15);
}

}  // namespace
}  // namespace posgeom::testing
