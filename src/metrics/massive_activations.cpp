#include "posgeom/metrics/massive_activations.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>

namespace posgeom::metrics {
namespace {

using anova::MagnitudeStatistics;

// Hidden state row t's sum over windows, every position: the skipped ones from the
// magnitudes, the others from the ANOVA's sums.
Eigen::RowVectorXd positionSum(const anova::LayerStatistics& s, int64_t t) {
  const auto skipped = s.magnitudes.skipped_position_sum.rows();
  return t < skipped ? Eigen::RowVectorXd(s.magnitudes.skipped_position_sum.row(t)) : Eigen::RowVectorXd(s.position_sum.row(t - skipped));
}

Eigen::RowVectorXd globalMean(const anova::LayerStatistics& s, int64_t first) {
  const int64_t t = s.magnitudes.seqLen();
  Eigen::RowVectorXd sum = Eigen::RowVectorXd::Zero(s.dim());
  for (int64_t p = first; p < t; ++p) sum += positionSum(s, p);
  return sum / static_cast<double>(s.sequences * (t - first));
}

VarianceShares varianceShares(const anova::LayerStatistics& s, int64_t first) {
  const auto& m = s.magnitudes;
  const int64_t t = m.seqLen(), kept = t - first;
  const auto n = static_cast<double>(s.sequences);
  const Eigen::RowVectorXd mu = globalMean(s, first);
  double squares = 0, position = 0;
  for (int64_t p = first; p < t; ++p) {
    squares += m.position_square_sum[p];
    position += n * (positionSum(s, p) / n - mu).squaredNorm();
  }
  const double total = squares - n * static_cast<double>(kept) * mu.squaredNorm();
  const double contexts = first == 0 ? m.context_square_sum : m.context_square_sum_from_1;
  const double context = static_cast<double>(kept) * (contexts - n * mu.squaredNorm());
  VarianceShares v;
  v.first_position = first;
  if (!(total > 0)) return v;
  v.position = position / total;
  v.context = context / total;
  v.residual = 1 - v.position - v.context;
  return v;
}

}  // namespace

double medianRelativeError() { return std::sqrt(17.0 / 16.0) - 1; }

double medianFromCounts(const std::vector<double>& counts) {
  const double total = std::accumulate(counts.begin(), counts.end(), 0.0);
  if (!(total > 0)) return 0;
  // The value of rank ceil(n / 2): its bin's geometric middle, within sqrt(high / low) of it.
  const double rank = std::ceil(total / 2);
  double seen = 0;
  for (std::size_t k = 0; k < counts.size(); ++k) {
    seen += counts[k];
    if (seen >= rank) {
      const auto bin = static_cast<int64_t>(k);
      return std::sqrt(anova::magnitudeBinLow(bin) * anova::magnitudeBinHigh(bin));
    }
  }
  return 0;
}

std::optional<MassiveActivations> massiveActivations(const anova::LayerStatistics& s) {
  const auto& m = s.magnitudes;
  if (m.empty() || s.sequences == 0) return std::nullopt;
  MassiveActivations out;
  out.median_abs = medianFromCounts(m.counts);
  out.median_relative_error = medianRelativeError();
  const Eigen::VectorXd largest = m.absMax();
  const double cut = kMassiveTimesMedian * out.median_abs;
  // A median of 0 (half the activations 0, or below 2^-64) names nothing massive.
  auto is_massive = [&](double v) { return out.median_abs > 0 && v >= cut; };
  std::vector<int64_t> order(static_cast<std::size_t>(largest.size()));
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) { return largest[a] > largest[b]; });
  for (const int64_t i : order) out.massive_count += is_massive(largest[i]) ? 1 : 0;
  const Eigen::RowVectorXd pos0 = positionSum(s, 0) / static_cast<double>(s.sequences) - globalMean(s, 0);
  order.resize(std::min<std::size_t>(order.size(), kTopDimensions));
  out.top_by_position.resize(static_cast<Eigen::Index>(order.size()), m.seqLen());
  for (std::size_t r = 0; r < order.size(); ++r) {
    const int64_t i = order[r];
    const auto at = static_cast<std::size_t>(i);
    MassiveDimension d;
    d.dim = i;
    d.max_abs = largest[i];
    d.times_median = out.median_abs > 0 ? largest[i] / out.median_abs : std::numeric_limits<double>::infinity();
    d.massive = is_massive(largest[i]);
    d.window = m.max_window[at];
    d.position = m.max_position[at];
    d.token = m.max_token[at];
    for (int64_t p = 0; p < m.seqLen() && d.massive && static_cast<int>(d.positions.size()) < kListedPositions; ++p)
      if (m.position_abs_max(p, i) >= cut) d.positions.push_back(p);
    d.pos0_share = pos0.squaredNorm() > 0 ? pos0[i] * pos0[i] / pos0.squaredNorm() : 0;
    out.top_by_position.row(static_cast<Eigen::Index>(r)) = m.position_abs_max.col(i).transpose();
    out.top.push_back(std::move(d));
  }
  out.position0_norm = pos0.norm();
  double massive_part = 0;
  for (Eigen::Index i = 0; i < largest.size(); ++i)
    if (is_massive(largest[i])) massive_part += pos0[i] * pos0[i];
  out.position0_massive_share = out.position0_norm > 0 ? massive_part / pos0.squaredNorm() : 0;
  out.with_position_0 = varianceShares(s, 0);
  out.without_position_0.first_position = 1;
  if (m.seqLen() > 1) out.without_position_0 = varianceShares(s, 1);
  return out;
}

}  // namespace posgeom::metrics
