#pragma once
// What the accumulators of a pass keep: decided by the plan before the pass. Torch-free.
#include <algorithm>
#include <cstdint>
#include <set>

#include "posgeom/anova/layer_statistics.h"

namespace posgeom::anova {

struct AccumulatorOptions {
  std::set<int64_t> layers;     // hidden-state indices to accumulate
  int64_t skip_first = 1;       // positions dropped from every statistic
  bool second_moment = true;    // sum h h^T (d x d per layer); off for very wide models
  bool attention_inputs = false;  // --heads: per-position sums of each block's normed attention input
  SampleCaps caps;
  // At most this many windows reach the accumulator (--num-seqs; 0: unknown): the samples
  // are allocated for no more rows than that, not for their caps (4096 context means of a
  // d = 8192 model are 268 MB a layer). Not a setting: the statistics are the same.
  int64_t windows_expected = 0;
  // Layer-major: a layer's sums are allocated when its block first runs, not all at the
  // start, so that a one-wave pass which hands each layer on once its block is done
  // (Accumulator::takeLayer) holds one or two layers' statistics, never every layer's.
  bool allocate_on_first_use = false;
  // The cosine of every accumulated hidden state with every earlier one, token by token
  // (LayerStatistics::earlier_cosine_sums): each batch's unit vectors of every accumulated
  // layer are held until the batch ends, 4 B T' d bytes a layer. --corpus random only (the
  // paper's Appendix B.2), never layer-major (a wave's every layer at once).
  bool layer_cosines = false;
};

// The rows a sample capped at `cap` is allocated: no more than the windows that can come.
inline int64_t sampleRows(int64_t cap, int64_t windows_expected) {
  return windows_expected > 0 ? std::min(cap, windows_expected) : cap;
}

inline bool operator==(const AccumulatorOptions& a, const AccumulatorOptions& b) {
  return a.layers == b.layers && a.skip_first == b.skip_first && a.second_moment == b.second_moment &&
         a.attention_inputs == b.attention_inputs && a.caps.contexts == b.caps.contexts &&
         a.caps.reservoir == b.caps.reservoir && a.caps.attention_samples == b.caps.attention_samples &&
         a.layer_cosines == b.layer_cosines;
}

}  // namespace posgeom::anova
