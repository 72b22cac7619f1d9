#pragma once
// What the accumulators of a pass keep: decided by the plan before the pass. Torch-free.
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
};

inline bool operator==(const AccumulatorOptions& a, const AccumulatorOptions& b) {
  return a.layers == b.layers && a.skip_first == b.skip_first && a.second_moment == b.second_moment &&
         a.attention_inputs == b.attention_inputs && a.caps.contexts == b.caps.contexts &&
         a.caps.reservoir == b.caps.reservoir && a.caps.attention_samples == b.caps.attention_samples;
}

}  // namespace posgeom::anova
