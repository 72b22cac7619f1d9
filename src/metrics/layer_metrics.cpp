#include "posgeom/metrics/layer_metrics.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "posgeom/metrics/fourier.h"
#include "posgeom/metrics/spectral.h"

namespace posgeom::metrics {

LayerMetrics computeLayerMetrics(const anova::LayerStatistics& stats, const LayerMetricsOptions& options) {
  const auto d = anova::decompose(stats);
  LayerMetrics m;
  m.layer = stats.layer;
  m.sequences = stats.sequences;
  m.positions = stats.positions();
  m.dim = stats.dim();
  m.positional = d.positional;
  m.singular_pos = singularValues(d.positional);
  m.screenot = screeNot(m.singular_pos, d.positional.rows(), d.positional.cols(), options.screenot_k,
                        options.screenot_strategy);
  m.stable_rank = stableRank(m.singular_pos);
  m.explained_ratio = explainedRatio(m.singular_pos, m.screenot.rank);
  m.global_mean_norm = d.global_mean.norm();
  m.pos_fro_norm = d.positional.norm();
  if (stats.hasSecondMoment()) {
    // |P stacked N times|_op / |M|_op = sqrt(N) s_1(P) / sqrt(lambda_max(M^T M)).
    const Eigen::VectorXd s_hidden = singularValuesFromMoment(d.hidden_moment);
    if (s_hidden.size() && s_hidden[0] > 0)
      m.relative_norm = std::sqrt(static_cast<double>(stats.sequences)) * m.singular_pos[0] / s_hidden[0];
    m.singular_cvec = singularValuesFromMoment(d.cvec_moment);
    m.singular_resid = singularValuesFromMoment(d.resid_moment);
  }
  m.gram = normalizedGram(d.positional);
  m.gram_dct = dct2(m.gram);
  m.lowfreq_energy = lowFrequencyEnergy(m.gram_dct, options.lowfreq_k);
  m.power_spectrum = positionalPowerSpectrum(d.positional);
  m.incoherence = absCosines(d.positional, d.context);
  if (std::set<std::string>(stats.context_labels.begin(), stats.context_labels.end()).size() >= 2)
    m.label_cosines = labelCosines(d.context, stats.context_labels);
  const double tokens = static_cast<double>(stats.sequences * stats.positions());
  m.mean_hidden_norm = stats.norm_sum / tokens;
  if (stats.previous_cosine_sum != 0) m.previous_layer_cosine = stats.previous_cosine_sum / tokens;

  m.combined_positions = std::min<Eigen::Index>(128, d.positional.rows());
  const Eigen::Index contexts = std::min<Eigen::Index>(64, d.context.rows());
  Eigen::MatrixXd stacked(m.combined_positions + contexts, d.positional.cols());
  for (Eigen::Index i = 0; i < m.combined_positions; ++i) stacked.row(i) = d.positional.row(i * d.positional.rows() / m.combined_positions);
  for (Eigen::Index i = 0; i < contexts; ++i) stacked.row(m.combined_positions + i) = d.context.row(i * d.context.rows() / contexts);
  m.combined_gram = normalizedGram(stacked);

  const Eigen::MatrixXd directions = topDirections(d.positional, options.components);
  m.spiral = d.positional * directions;
  if (stats.reservoir.rows() > 0) {
    // cvec = h - m_t for each kept sequence.
    Eigen::MatrixXd cvec = stats.reservoir;
    for (Eigen::Index r = 0; r < cvec.rows(); ++r) cvec.row(r) -= d.position_means.row(r % stats.positions());
    m.reservoir_cvec = cvec * directions;
  }
  return m;
}

CrossLayerMetrics compareLayers(const LayerMetrics& a, const LayerMetrics& b) {
  CrossLayerMetrics c;
  c.from = a.layer;
  c.to = b.layer;
  c.basis_cosine = matrixCosine(a.positional, b.positional);
  const Eigen::Index r = std::max(1, std::min(a.screenot.rank, b.screenot.rank));
  c.principal_cosines = principalAngleCosines(a.positional, b.positional, r);
  return c;
}

}  // namespace posgeom::metrics
