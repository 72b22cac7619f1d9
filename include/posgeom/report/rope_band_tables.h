#pragma once
// RoPE's frequency bands per head (heads::RopeBandReport) in summary.json and rope_bands.csv.
#include <nlohmann/json.hpp>
#include <vector>

#include "posgeom/heads/head_analysis.h"

namespace posgeom::report {

// A head's "rope_bands" (null for a head without RoPE): kKernelShare and kAttentionShare per
// band, kQPairNorm and kKPairNorm per turning pair, kQUnturnedNorm, kKUnturnedNorm,
// kEtcHighestBand, kEtcLowestBand, kKernelMass and kAttentionMass.
nlohmann::json ropeBandsJson(const heads::HeadReport& head);

// "rope_band_layout": per block with RoPE heads (kBlock), its bands (kBands: kFirstPair,
// kPairs, kDims, kShortestWavelength, kLongestWavelength; the unturned band's wavelengths null).
// Empty when no head turns.
nlohmann::json ropeBandLayoutJson(const std::vector<heads::HeadReport>& heads);

// rope_bands.csv's rows: a row per block, head and band.
nlohmann::json ropeBandRows(const std::vector<heads::HeadReport>& heads);

}  // namespace posgeom::report
