#include "posgeom/metrics/layer_metrics.h"

#include <algorithm>
#include <cmath>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "posgeom/base/parallel.h"

#include "posgeom/metrics/fourier.h"
#include "posgeom/metrics/geometry.h"
#include "posgeom/metrics/lapack.h"
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
  // One SVD of P gives its spectrum, the spiral's directions and the cross-layer subspaces.
  const auto svd = lapack::thinSvd(d.positional);
  m.singular_pos = svd.values;
  m.screenot = screeNot(m.singular_pos, d.positional.rows(), d.positional.cols(), options.screenot_k,
                        options.screenot_strategy);
  m.stable_rank = stableRank(m.singular_pos);
  m.explained_ratio = explainedRatio(m.singular_pos, m.screenot.rank);
  m.global_mean_norm = d.global_mean.norm();
  m.massive = massiveActivations(stats);
  m.pos_fro_norm = d.positional.norm();
  if (stats.hasSecondMoment()) {
    // |P stacked N times|_op / |M|_op = sqrt(N) s_1(P) / sqrt(lambda_max(M^T M)).
    // Only the largest: Lanczos, not a third full eigendecomposition.
    const double s_hidden = std::sqrt(std::max(0.0, lapack::largestEigenvalue(d.hidden_moment)));
    if (s_hidden > 0) m.relative_norm = std::sqrt(static_cast<double>(stats.sequences)) * m.singular_pos[0] / s_hidden;
    const auto& solver = options.moment_solver ? *options.moment_solver : *lapackMomentSolver();
    m.singular_cvec = singularValuesFromMoment(d.cvec_moment, solver);
    m.singular_resid = singularValuesFromMoment(d.resid_moment, solver);
  }
  m.gram = normalizedGram(d.positional);
  m.gram_dct = dct2(m.gram);
  m.lowfreq_energy = lowFrequencyEnergy(m.gram_dct, lowFreqK(options.lowfreq_k, m.gram_dct.rows()));
  m.power_spectrum = positionalPowerSpectrum(d.positional);
  m.incoherence = absCosines(d.positional, d.context);
  if (std::set<std::string>(stats.context_labels.begin(), stats.context_labels.end()).size() >= 2)
    m.label_cosines = labelCosines(d.context, stats.context_labels);
  const double tokens = static_cast<double>(stats.sequences * stats.positions());
  m.mean_hidden_norm = stats.norm_sum / tokens;
  if (stats.previous_cosine_sum != 0) m.previous_layer_cosine = stats.previous_cosine_sum / tokens;
  if (stats.layer_cosines) m.earlier_cosines = Eigen::VectorXd(stats.earlier_cosine_sums / tokens);

  m.combined_positions = std::min<Eigen::Index>(128, d.positional.rows());
  const Eigen::Index contexts = std::min<Eigen::Index>(64, d.context.rows());
  Eigen::MatrixXd stacked(m.combined_positions + contexts, d.positional.cols());
  for (Eigen::Index i = 0; i < m.combined_positions; ++i) stacked.row(i) = d.positional.row(i * d.positional.rows() / m.combined_positions);
  for (Eigen::Index i = 0; i < contexts; ++i) stacked.row(m.combined_positions + i) = d.context.row(i * d.context.rows() / contexts);
  m.combined_gram = normalizedGram(stacked);

  m.directions = svd.right.leftCols(std::min<Eigen::Index>(kKeptDirections, svd.right.cols()));
  const Eigen::MatrixXd directions = m.directions.leftCols(std::min(options.components, m.directions.cols()));
  m.spiral = d.positional * directions;
  if (stats.reservoir.rows() > 0) {
    // cvec = h - m_t for each kept sequence.
    Eigen::MatrixXd cvec = stats.reservoir;
    for (Eigen::Index r = 0; r < cvec.rows(); ++r) cvec.row(r) -= d.position_means.row(r % stats.positions());
    m.reservoir_cvec = cvec * directions;
  }
  return m;
}

std::vector<LayerMetrics> computeAllLayerMetrics(const anova::StateLayers& layers,
                                                 const LayerMetricsOptions& options, unsigned workers,
                                                 const std::function<void(int64_t)>& done) {
  std::vector<LayerMetrics> out(layers.size());
  std::mutex mutex;
  auto finished = [&](std::size_t i) {
    const std::lock_guard<std::mutex> lock(mutex);
    if (done) done(layers.index(i));
  };
  workers = static_cast<unsigned>(std::min<std::size_t>(std::max(1u, workers), layers.size()));
  // The cores shared out among the layers in hand.
  std::optional<lapack::LimitedThreads> shared;
  if (workers > 1) shared.emplace(static_cast<int>(std::max(1u, std::thread::hardware_concurrency() / workers)));
  parallelFor(layers.size(), workers, [&](std::size_t i) {
    out[i] = computeLayerMetrics(*layers.at(i), options);
    finished(i);
  });
  return out;
}

int64_t layerMetricsBytes(int64_t dim, int64_t positions) {
  // The two d x d sums, the three moments of the decomposition, LAPACK's copy and
  // workspace (about 2 d^2 for dsyevd's), and the T x d bases with their SVD.
  return 8 * (8 * dim * dim + 4 * positions * dim + 2 * positions * positions);
}

LayerCosines layerCosines(const std::vector<LayerMetrics>& layers) {
  LayerCosines out;
  std::vector<const LayerMetrics*> measured;
  for (const auto& m : layers)
    if (m.earlier_cosines) measured.push_back(&m), out.layers.push_back(m.layer);
  const auto n = static_cast<Eigen::Index>(measured.size());
  out.cosine = Eigen::MatrixXd::Identity(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j < n; ++j) {
      const auto& later = *measured[static_cast<std::size_t>(std::max(i, j))];
      const int64_t earlier = measured[static_cast<std::size_t>(std::min(i, j))]->layer;
      if (earlier < later.layer) out.cosine(i, j) = (*later.earlier_cosines)[earlier];
    }
  return out;
}

CrossLayerMetrics compareLayers(const LayerMetrics& a, const LayerMetrics& b) {
  CrossLayerMetrics c;
  c.from = a.layer;
  c.to = b.layer;
  c.basis_cosine = matrixCosine(a.positional, b.positional);
  const Eigen::Index r = std::max(1, std::min(a.screenot.rank, b.screenot.rank));
  if (a.positional.cols() == b.positional.cols() && r <= a.directions.cols() && r <= b.directions.cols())
    c.principal_cosines = principalAngleCosinesOf(a.directions.leftCols(r), b.directions.leftCols(r));
  else
    c.principal_cosines = principalAngleCosines(a.positional, b.positional, r);
  return c;
}

}  // namespace posgeom::metrics
