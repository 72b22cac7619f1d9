#pragma once
// Direct (non-streaming) statistics of a small hidden-state tensor, for checking the
// streaming pieces against the definitions.
#include <Eigen/Dense>
#include <vector>

#include "posgeom/anova/layer_statistics.h"

namespace posgeom::testing {

// h[c] is one sequence [T, d].
using Sequences = std::vector<Eigen::MatrixXd>;
Sequences randomSequences(int n, int t, int d, unsigned seed);
// The statistics straight from the definitions (positions before skip_first dropped).
anova::LayerStatistics directStatistics(const Sequences& h, int skip_first, int64_t layer = 0);
// Every number and sample of two runs' statistics equal, bit for bit (gtest expectations).
void expectSameStatistics(const std::vector<anova::LayerStatistics>& a, const std::vector<anova::LayerStatistics>& b);

}  // namespace posgeom::testing
