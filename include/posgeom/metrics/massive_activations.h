#pragma once
// Issue 36: the massive activations of one hidden state (Sun et al. 2024: a few dimensions
// at a few positions, orders of magnitude above the median |h|), read from its magnitude
// statistics, and where they sit in the ANOVA: how much of |pos_0| they make, and the
// variance shares with position 0 in and out.
#include <Eigen/Dense>
#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "posgeom/anova/layer_statistics.h"

namespace posgeom::metrics {

// A dimension is massive when its largest |h| is at least this many times the layer's median
// |h|. Sun et al. name activations above 100 and about 1000x the median in 7B-70B models; 100x
// also names those of the small models posgeom's tests and README run. Every top dimension's
// ratio is reported, so a stricter cut is a filter on massive_activations.csv.
inline constexpr double kMassiveTimesMedian = 100;
// The largest dimensions reported per layer, massive or not.
inline constexpr int kTopDimensions = 8;
// Positions listed per dimension (where it is massive), at most.
inline constexpr int kListedPositions = 16;

struct MassiveDimension {
  int64_t dim = 0;
  double max_abs = 0;       // its largest |h| over every window and position
  double times_median = 0;  // max_abs / the layer's median |h|
  bool massive = false;     // times_median >= kMassiveTimesMedian
  int64_t window = -1, position = -1, token = -1;  // where max_abs first occurred (token -1: not known)
  std::vector<int64_t> positions;  // the positions where some window's |h| reaches the massive cut, first kListedPositions
  double pos0_share = 0;  // of |pos_0|^2, the share in this dimension alone
};

// The ANOVA's variance about the global mean over positions first..T-1, split as the paper
// splits it: N sum_t |pos_t|^2, T' sum_c |ctx_c|^2 and the rest, as shares of the total.
// NaN (null in summary.json) where there is no variance to share: windows of one position
// without position 0, or every hidden state alike.
struct VarianceShares {
  int64_t first_position = 0;
  double position = std::numeric_limits<double>::quiet_NaN();
  double context = std::numeric_limits<double>::quiet_NaN();
  double residual = std::numeric_limits<double>::quiet_NaN();
};

struct MassiveActivations {
  double median_abs = 0;
  // The median is read from bins 1/16 octave wide: within this factor of the true one.
  double median_relative_error = 0;
  std::vector<MassiveDimension> top;  // the kTopDimensions largest, largest first
  int64_t massive_count = 0;          // dimensions massive (all, not only the top ones)
  Eigen::MatrixXd top_by_position;    // [top, T]: each top dimension's largest |h| at each position
  double position0_norm = 0;          // |pos_0|, the global mean over every position
  double position0_massive_share = 0;  // of |pos_0|^2, the share in the massive dimensions
  VarianceShares with_position_0, without_position_0;
};

// None for statistics without magnitudes (a state written before them).
std::optional<MassiveActivations> massiveActivations(const anova::LayerStatistics& stats);

// The median |h| estimated from the histogram's counts, and its bound (both 0 when empty).
double medianFromCounts(const std::vector<double>& counts);
double medianRelativeError();

}  // namespace posgeom::metrics
