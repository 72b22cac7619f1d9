#pragma once
// Which of RoPE's frequencies a head's logits use (issue 36; Barbero et al., "Round and Round
// We Go", ICLR 2025: Gemma's positional heads live in the fastest-turning pairs, its
// semantic channel in the slowest). q . k splits exactly into one term per 2-D rotation
// pair; the pairs are grouped into bands from the fastest-turning down, and the dims RoPE
// leaves unturned (partial rotary) make a band of their own. Eigen only.
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/heads/sampled_attention.h"

namespace posgeom::heads {

// Turning pairs go into at most this many bands of consecutive pairs (sizes differing by at
// most one): Llama's 64 pairs make bands of 8, a quarter of a 16-wide head turning (the
// fixtures' GPT-NeoX) bands of one pair. At theta = 10^4 a 128-wide head's pairs cover 13
// octaves of frequency, 1.6 a band: enough to tell the fast end from the slow one.
inline constexpr int64_t kRopeBands = 8;

// A head keeps its mass in the high-frequency (or the low) half of its turning bands, or in
// the unturned dims, when that part holds more than this share of the logits' energy; "spread" otherwise.
inline constexpr double kRopeMassAbove = 2.0 / 3.0;

struct RopeBand {
  int64_t first_pair = 0;  // turning pairs [first_pair, first_pair + pairs); the unturned band: 0 pairs
  int64_t pairs = 0;
  int64_t dims = 0;  // the head's dims in the band: 2 pairs, or the unturned ones
  // 2 pi / inverse frequency over the band's pairs: how many positions one turn takes
  // (infinite for the unturned band).
  double shortest_wavelength = std::numeric_limits<double>::infinity();
  double longest_wavelength = std::numeric_limits<double>::infinity();
};

struct RopeBandReport {
  std::vector<RopeBand> bands;  // the turning bands, fastest first, then the unturned dims if any
  bool unturned_band = false;   // the last band is the dims RoPE leaves
  // Each band's share of what the logits vary by: band b's part of each logit, squared about
  // its mean over the query's keys (a part alike for every key moves no attention), summed
  // over the queries from the skip on and the keys the kernel sees; the shares sum to 1
  // (cross-band products left out, as qk_shares leaves out the cross terms). Of the actual
  // logits (sampled queries and keys; NaN without samples), and of the kernel's (its queries
  // against the mean keys). NaN where nothing varies over the keys (a query with one key, or
  // variation below 1e-12 of the parts' squares about zero): no band holds a share of nothing.
  Eigen::VectorXd attention_share, kernel_share;
  // Mean norm of each turning pair of q and of k (after the head's norms and RoPE's scale)
  // over the sampled rows from the skip on (the mean rows without samples), and of the
  // unturned dims together (NaN where every dim turns).
  Eigen::VectorXd q_pair_norm, k_pair_norm;
  double q_unturned_norm = std::numeric_limits<double>::quiet_NaN();
  double k_unturned_norm = std::numeric_limits<double>::quiet_NaN();
  // ETC at the last position of the kernel made from the highest-frequency band's logits
  // alone, and from the lowest turning band's.
  double etc_highest_band = 0, etc_lowest_band = 0;
  // Where the kernel's, and the actual logits', shares lie: "high" (the faster half of the
  // turning bands), "low" (the slower half), "unturned" or "spread" (kRopeMassAbove; an odd
  // count's middle band is in neither half, and a single turning band in none); empty where
  // the shares are NaN (the actual one without samples).
  std::string kernel_mass, attention_mass;
};

// The bands of a head of `head_dim` whose pairs turn by RoPE's `inverse_frequencies` (one a
// pair, fastest first; no bands without pairs).
std::vector<RopeBand> ropeBandsOf(const std::vector<double>& inverse_frequencies, int64_t head_dim);

// The band report of one head; nothing for heads without RoPE. `mean_query`: the kernel's
// queries are the mean embedding's (QueryMode::kMeanEmbedding, or no samples), else each
// sample's own.
std::optional<RopeBandReport> ropeBands(const HeadMaps& head, const HeadProjections& projections, const KernelSettings& settings,
                                        bool mean_query);

// The kernel [T, T] from the logits of bands [first_band, end_band) alone (the others' dims
// left out of q . k), as sampleAttention makes it otherwise: every band gives the head's kernel.
Eigen::MatrixXd bandKernel(const HeadMaps& head, const HeadProjections& projections, const KernelSettings& settings,
                           bool mean_query, int64_t first_band, int64_t end_band);

}  // namespace posgeom::heads
