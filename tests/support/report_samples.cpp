#include "report_samples.h"

#include <algorithm>
#include <cmath>

#include "anova_fixtures.h"
#include "posgeom/heads/sampled_attention.h"
#include "posgeom/report/tables.h"

namespace posgeom::testing {

std::vector<metrics::LayerMetrics> sampleLayers(int layers, int positions, int dim) {
  std::vector<metrics::LayerMetrics> out;
  metrics::LayerMetricsOptions o;
  o.screenot_k = std::max(1, (std::min(positions, dim) - 2) / 2 - 1);
  for (int l = 0; l < layers; ++l) {
    auto h = randomSequences(6, positions + 1, dim, 100 + static_cast<unsigned>(l));
    for (auto& seq : h)  // a smooth positional signal, so there is a spiral to draw
      for (int t = 0; t <= positions; ++t) seq(t, 0) += 3 * std::cos(0.05 * t), seq(t, 1) += 3 * std::sin(0.05 * t);
    auto stats = directStatistics(h, 1, l);
    stats.reservoir = Eigen::MatrixXd(2 * positions, dim);  // two whole sequences for the spiral's background
    for (int c = 0; c < 2; ++c) stats.reservoir.middleRows(c * positions, positions) = h[static_cast<size_t>(c)].bottomRows(positions);
    stats.reservoir_windows = {0, 1};
    if (l > 0) stats.previous_cosine_sum = 0.5 * 6 * positions;  // mean cosine 0.5 with the previous layer
    out.push_back(metrics::computeLayerMetrics(stats, o));
  }
  return out;
}

std::vector<heads::HeadReport> sampleHeads(int layers, int per_layer, int positions, int qk_heads) {
  std::vector<heads::HeadReport> out;
  for (int l = 1; l < layers; ++l)
    for (int h = 0; h < per_layer; ++h) {
      heads::HeadReport r;
      r.block = l - 1;
      r.head = h;
      const double decay = 0.02 + 0.5 * ((l * 7 + h * 3) % 11) / 11.0;
      r.profile = Eigen::VectorXd(positions);
      for (int i = 0; i < positions; ++i) r.profile[i] = std::exp(-decay * (positions - 1 - i));
      r.profile /= r.profile.sum();
      r.etc = 1.0 / r.profile.squaredNorm();
      r.keys = positions;
      r.kind = *heads::parseHeadKind(heads::classify(r.etc, r.keys, {}));
      r.etc_curve = Eigen::VectorXd::Constant(positions, r.etc);
      r.kernel_thumb = Eigen::MatrixXd::Zero(std::min(positions, 48), std::min(positions, 48));
      for (Eigen::Index n = 0; n < r.kernel_thumb.rows(); ++n) r.kernel_thumb(n, n) = 1;  // a local head
      r.kernel_tv = 0.05 + 0.9 * decay;  // something to draw: sharper heads further from their kernel
      r.equivariance_tv = 0.01 * h;
      r.kernel_query_spread = 0.02 * l;
      r.induction_score = h == 1 && l > 1 ? 0.7 : 0.05;  // as a probe run: head 1 of later blocks
      r.previous_token_score = h == 2 && l == 1 ? 0.9 : 0.1;
      if (static_cast<int>(out.size()) < qk_heads) {
        for (std::size_t i = 0; i < heads::qkMapNames().size(); ++i) r.qk_maps.push_back(Eigen::MatrixXd::Random(positions, positions));
        heads::QkBasisReport b;
        b.diagonal_share = 0.3;
        b.block_share = 0.6;
        b.standard_corner = Eigen::MatrixXd::Random(heads::kQkCornerSide, heads::kQkCornerSide);
        b.standard_corner.diagonal().array() += 4;
        b.kept_corner = Eigen::MatrixXd::Zero(heads::kQkCornerSide, heads::kQkCornerSide);
        b.kept_corner.topLeftCorner(5, 5).setRandom();
        r.qk_basis = std::move(b);
      }
      out.push_back(std::move(r));
    }
  return out;
}

nlohmann::json sampleSummary(const std::vector<metrics::LayerMetrics>& layers, const std::vector<heads::HeadReport>& heads) {
  std::vector<metrics::CrossLayerMetrics> cross;
  for (std::size_t i = 1; i < layers.size(); ++i) cross.push_back(metrics::compareLayers(layers[i - 1], layers[i]));
  return report::summaryJson({{"model", "synthetic"}, {"seq_len", 0}}, layers, cross, heads);
}

void addRopeBands(std::vector<heads::HeadReport>& heads, int pairs, int unturned_dims, bool sampled) {
  std::vector<double> frequencies;
  for (int j = 0; j < pairs; ++j) frequencies.push_back(std::pow(100.0, -static_cast<double>(j) / pairs));
  for (auto& h : heads) {
    heads::RopeBandReport r;
    r.bands = heads::ropeBandsOf(frequencies, 2 * pairs + unturned_dims);
    r.unturned_band = unturned_dims > 0;
    const auto bands = static_cast<Eigen::Index>(r.bands.size()), turning = bands - (r.unturned_band ? 1 : 0);
    r.kernel_share = Eigen::VectorXd::Zero(bands);
    r.kernel_share[h.head % bands] = 1;
    const auto band = h.head % bands;
    r.kernel_mass = band == turning ? "unturned" : band < turning / 2 ? "high" : band >= turning - turning / 2 ? "low" : "spread";
    r.attention_share = Eigen::VectorXd::Constant(bands, sampled ? 1.0 / static_cast<double>(bands) : std::nan(""));
    if (sampled) r.attention_mass = "spread";
    r.q_pair_norm = r.k_pair_norm = Eigen::VectorXd::LinSpaced(pairs, 1, 2);
    r.etc_highest_band = 3, r.etc_lowest_band = 20;
    h.rope_bands = r;
  }
}

}  // namespace posgeom::testing
