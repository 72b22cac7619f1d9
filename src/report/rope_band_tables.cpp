#include "posgeom/report/rope_band_tables.h"

#include <set>

#include "posgeom/report/json_number.h"
#include "posgeom/report/summary_keys.h"

namespace posgeom::report {
namespace {

nlohmann::json valuesJson(const Eigen::VectorXd& v) {
  nlohmann::json out = nlohmann::json::array();
  for (const double x : v) out.push_back(finiteOrNull(x));
  return out;
}

}  // namespace

nlohmann::json ropeBandsJson(const heads::HeadReport& head) {
  if (!head.rope_bands) return nullptr;
  const auto& r = *head.rope_bands;
  return {{keys::kKernelShare, valuesJson(r.kernel_share)},
          {keys::kAttentionShare, valuesJson(r.attention_share)},
          {keys::kQPairNorm, valuesJson(r.q_pair_norm)},
          {keys::kKPairNorm, valuesJson(r.k_pair_norm)},
          {keys::kQUnturnedNorm, finiteOrNull(r.q_unturned_norm)},
          {keys::kKUnturnedNorm, finiteOrNull(r.k_unturned_norm)},
          {keys::kEtcHighestBand, r.etc_highest_band},
          {keys::kEtcLowestBand, r.etc_lowest_band},
          {keys::kKernelMass, r.kernel_mass.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.kernel_mass)},
          {keys::kAttentionMass, r.attention_mass.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.attention_mass)}};
}

nlohmann::json ropeBandLayoutJson(const std::vector<heads::HeadReport>& heads) {
  nlohmann::json out = nlohmann::json::array();
  std::set<int64_t> seen;
  for (const auto& h : heads) {
    if (!h.rope_bands || !seen.insert(h.block).second) continue;  // a block's heads turn alike
    nlohmann::json bands = nlohmann::json::array();
    for (const auto& b : h.rope_bands->bands)
      bands.push_back({{keys::kFirstPair, b.first_pair},
                       {keys::kPairs, b.pairs},
                       {keys::kDims, b.dims},
                       {keys::kShortestWavelength, finiteOrNull(b.shortest_wavelength)},
                       {keys::kLongestWavelength, finiteOrNull(b.longest_wavelength)}});
    out.push_back({{keys::kBlock, h.block}, {keys::kBands, std::move(bands)}});
  }
  return out;
}

nlohmann::json ropeBandRows(const std::vector<heads::HeadReport>& heads) {
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& h : heads) {
    if (!h.rope_bands) continue;
    const auto& r = *h.rope_bands;
    for (std::size_t b = 0; b < r.bands.size(); ++b) {
      const auto& band = r.bands[b];
      const auto i = static_cast<Eigen::Index>(b);
      rows.push_back({{keys::kBlock, h.block},
                      {keys::kHead, h.head},
                      {keys::kBand, b},
                      {keys::kFirstPair, band.first_pair},
                      {keys::kPairs, band.pairs},
                      {keys::kDims, band.dims},
                      {keys::kShortestWavelength, finiteOrNull(band.shortest_wavelength)},
                      {keys::kLongestWavelength, finiteOrNull(band.longest_wavelength)},
                      {keys::kKernelShare, finiteOrNull(r.kernel_share[i])},
                      {keys::kAttentionShare, finiteOrNull(r.attention_share[i])}});
    }
  }
  return rows;
}

}  // namespace posgeom::report
