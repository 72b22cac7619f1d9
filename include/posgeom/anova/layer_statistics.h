#pragma once
// The mergeable sufficient statistics of one layer's hidden states h[c,t] (sequence c,
// position t after skipping, d dimensions), in float64. Sums merge by addition; the
// bounded samples (context means, whole sequences) keep the lowest window indices, so
// shards merged give exactly the statistics of one run over all windows.
#include <Eigen/Dense>
#include <cstdint>
#include <string>
#include <vector>

#include "posgeom/anova/magnitude_statistics.h"

namespace posgeom::anova {

struct LayerStatistics {
  int64_t layer = 0;
  int64_t sequences = 0;  // N
  Eigen::MatrixXd position_sum;           // [T', d]  sum_c h[c,t]
  Eigen::MatrixXd second_moment;          // [d, d]   sum_{c,t} h h^T (empty when disabled)
  Eigen::MatrixXd context_second_moment;  // [d, d]   sum_c hbar_c hbar_c^T, hbar_c = mean_t h[c,t]
  double norm_sum = 0;                    // sum_{c,t} |h[c,t]|
  double previous_cosine_sum = 0;         // sum_{c,t} cos(h^l[c,t], h^{l-1}[c,t]); 0 for the first layer
  // With AccumulatorOptions::layer_cosines (--corpus random, the paper's Appendix B.2):
  // [layer] sum_{c,t} cos(h^layer[c,t], h^m[c,t]) for each accumulated hidden state m before
  // this one (0 for the others); layer_cosines says whether they were measured.
  Eigen::VectorXd earlier_cosine_sums;
  bool layer_cosines = false;

  // The context means hbar_c of the lowest-indexed windows (at most the context cap).
  Eigen::MatrixXd context_means;  // [K, d]
  std::vector<int64_t> context_windows;
  std::vector<std::string> context_labels;

  // With --heads, for the block that produces this layer (layer >= 1): the sum over
  // sequences of its attention input after the input norm, at every position [T, d]
  // (no positions skipped: the kernels have their own --kernel-skip).
  Eigen::MatrixXd attention_input_sum;
  // ... and the attention inputs themselves of the lowest-indexed windows, stacked
  // [S * T, d] (kept in float32 precision), for the sampled-query kernels and the QK
  // decomposition.
  Eigen::MatrixXd attention_samples;
  std::vector<int64_t> attention_sample_windows;

  // A few whole sequences for figures: the lowest-indexed windows, stacked.
  Eigen::MatrixXd reservoir;  // [R * T', d]
  std::vector<int64_t> reservoir_windows;

  // Over every position, skipped ones too: massive activations (empty in states written
  // before them).
  MagnitudeStatistics magnitudes;

  int64_t positions() const { return position_sum.rows(); }
  int64_t dim() const { return position_sum.cols(); }
  bool hasSecondMoment() const { return second_moment.size() > 0; }
};

struct SampleCaps {
  int64_t contexts = 4096;  // context means kept per layer
  int64_t reservoir = 4;    // whole sequences kept per layer
  int64_t attention_samples = 8;  // --heads: sequences whose attention inputs are kept per layer
};

// Adds `other` into `into` (same layer and shapes, else std::invalid_argument).
void merge(LayerStatistics& into, const LayerStatistics& other, const SampleCaps& caps);

}  // namespace posgeom::anova
