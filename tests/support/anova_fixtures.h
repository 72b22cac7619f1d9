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
// The magnitude statistics straight from their definitions: every position of windows
// `windows` (h's order), token ids `ids[c][t]` (empty: unknown, -1).
anova::MagnitudeStatistics directMagnitudes(const Sequences& h, int skip_first, const std::vector<int64_t>& windows,
                                            const std::vector<std::vector<int64_t>>& ids = {});
// directStatistics with directMagnitudes: windows 0..N-1, every token id 7.
anova::LayerStatistics directStatisticsWithMagnitudes(const Sequences& h, int skip_first, int64_t layer = 0);
// Every number and sample of two runs' statistics equal, bit for bit (gtest expectations).
void expectSameStatistics(const std::vector<anova::LayerStatistics>& a, const std::vector<anova::LayerStatistics>& b);

}  // namespace posgeom::testing
