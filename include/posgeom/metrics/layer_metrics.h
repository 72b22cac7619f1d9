#pragma once
// Every number and matrix the report shows for one layer, from its statistics.
#include <Eigen/Dense>
#include <algorithm>
#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "posgeom/anova/decomposition.h"
#include "posgeom/anova/state_layers.h"
#include "posgeom/metrics/geometry.h"
#include "posgeom/metrics/massive_activations.h"
#include "posgeom/metrics/moment_solver.h"
#include "posgeom/metrics/screenot.h"

namespace posgeom::metrics {

inline constexpr Eigen::Index kDefaultLowFreqK = 10;
// The low-frequency block for Grams of `positions`: as given, else the default cut to fit.
inline Eigen::Index lowFreqK(Eigen::Index given, Eigen::Index positions) {
  return given > 0 ? given : std::min(kDefaultLowFreqK, positions);
}

struct LayerMetricsOptions {
  int screenot_k = 20;
  ScreeNotStrategy screenot_strategy = ScreeNotStrategy::kImpute;
  Eigen::Index lowfreq_k = 0;  // 0: kDefaultLowFreqK, or every position of shorter windows
  Eigen::Index components = 2;  // principal components of P for the spiral
  std::shared_ptr<const MomentSolver> moment_solver;  // the d x d eigenvalue problems; none: LAPACK
};

// Principal directions of P kept per layer: enough for the cross-layer subspaces at any
// ScreeNOT rank the default bound allows.
inline constexpr Eigen::Index kKeptDirections = 64;

struct LayerMetrics {
  int64_t layer = 0;
  int64_t sequences = 0;
  int64_t positions = 0;
  int64_t dim = 0;
  ScreeNotThreshold screenot;
  double stable_rank = 0;
  double explained_ratio = 0;
  std::optional<double> relative_norm;  // needs the second moment
  double global_mean_norm = 0;
  double pos_fro_norm = 0;
  double lowfreq_energy = 0;
  CosineSummary incoherence;
  std::optional<LabelCosines> label_cosines;  // when contexts carry two or more labels
  double mean_hidden_norm = 0;
  std::optional<double> previous_layer_cosine;
  // With the cosines between layers measured (--corpus random): [layer] the mean over tokens
  // of cos(h^layer, h^m) for each hidden state m before this one (meaningful where m was
  // accumulated too).
  std::optional<Eigen::VectorXd> earlier_cosines;
  Eigen::VectorXd singular_pos, singular_cvec, singular_resid;
  Eigen::MatrixXd positional;      // P [T', d]
  Eigen::MatrixXd gram;            // normalized Gram of P [T', T']
  Eigen::MatrixXd gram_dct;        // its 2-D DCT
  Eigen::VectorXd power_spectrum;  // [T']
  Eigen::MatrixXd spiral;          // P on its top components [T', r]
  Eigen::MatrixXd directions;      // P's top right singular vectors [d, <= kKeptDirections], for compareLayers
  Eigen::MatrixXd reservoir_cvec;  // the reservoir's context vectors on the same components [R*T', r]
  // Normalized Gram of [P; C] stacked (up to 128 evenly spaced positions, then up to 64
  // evenly spaced kept contexts): the blocks show position, context and their incoherence.
  Eigen::MatrixXd combined_gram;
  Eigen::Index combined_positions = 0;  // rows of P in it
  std::optional<MassiveActivations> massive;  // issue 36; none for a state written before it
};

LayerMetrics computeLayerMetrics(const anova::LayerStatistics& stats, const LayerMetricsOptions& options);

// Every layer's metrics, `workers` layers at a time with the cores shared among them for
// their LAPACK calls; `done(layer)` is called, one call at a time, as each layer finishes.
// workers <= 1: one layer after another, LAPACK threaded as configured.
// The layers are read as each worker takes one (from a file, one at a time per worker).
std::vector<LayerMetrics> computeAllLayerMetrics(const anova::StateLayers& layers,
                                                 const LayerMetricsOptions& options, unsigned workers,
                                                 const std::function<void(int64_t layer)>& done = {});
// Bytes one layer's end stage holds at its peak (its moments, their decomposition and the
// LAPACK workspace): what bounds the workers.
int64_t layerMetricsBytes(int64_t dim, int64_t positions);

struct CrossLayerMetrics {
  int64_t from = 0, to = 0;
  double basis_cosine = 0;              // cos(P_from, P_to) as vectors
  Eigen::VectorXd principal_cosines;    // cosines of principal angles of the top-r subspaces
};
CrossLayerMetrics compareLayers(const LayerMetrics& a, const LayerMetrics& b);

// The paper's Appendix B.2 check: the mean token-by-token cosine between every pair of the
// layers that measured it (LayerMetrics::earlier_cosines), symmetric with ones on the
// diagonal, rows and columns in the order of `layers`; empty where none did.
struct LayerCosines {
  std::vector<int64_t> layers;
  Eigen::MatrixXd cosine;
};
LayerCosines layerCosines(const std::vector<LayerMetrics>& layers);

}  // namespace posgeom::metrics
