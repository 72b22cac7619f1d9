#include "posgeom/anova/magnitude_statistics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <tuple>

namespace posgeom::anova {

double magnitudeBinLow(int64_t k) {
  const int64_t exponent = k >> kMagnitudeMantissaBits, mantissa = k & ((int64_t{1} << kMagnitudeMantissaBits) - 1);
  if (exponent == 0) return 0;
  return std::ldexp(1.0 + static_cast<double>(mantissa) / 16.0, static_cast<int>(exponent - 127));
}

double magnitudeBinHigh(int64_t k) {
  if ((k >> kMagnitudeMantissaBits) == 0) return 0;
  return magnitudeBinLow(k) + std::ldexp(1.0 / 16.0, static_cast<int>((k >> kMagnitudeMantissaBits) - 127));
}

int64_t magnitudeBin(double x) {
  const float a = std::abs(static_cast<float>(x));
  if (!(a >= std::numeric_limits<float>::min())) return 0;  // zero and subnormals
  int e = 0;
  const double fraction = std::frexp(static_cast<double>(a), &e);  // a = fraction 2^e, fraction in [0.5, 1)
  const auto mantissa = static_cast<int64_t>(std::floor((2 * fraction - 1) * 16));
  return std::min<int64_t>((int64_t{e - 1 + 127} << kMagnitudeMantissaBits) + mantissa, kMagnitudeBins - 1);
}

MagnitudeStatistics MagnitudeStatistics::none(int64_t seq_len, int64_t skip_first, int64_t dim) {
  MagnitudeStatistics m;
  m.position_abs_max = Eigen::MatrixXd::Zero(seq_len, dim);
  for (auto* v : {&m.max_window, &m.max_position, &m.max_token}) v->assign(static_cast<std::size_t>(dim), -1);
  m.counts.assign(static_cast<std::size_t>(kMagnitudeBins), 0.0);
  m.skipped_position_sum = Eigen::MatrixXd::Zero(skip_first, dim);
  m.position_square_sum = Eigen::VectorXd::Zero(seq_len);
  return m;
}

void merge(MagnitudeStatistics& into, const MagnitudeStatistics& other) {
  if (into.empty() || other.empty()) {  // a state written before them: they would cover part of the windows
    into = MagnitudeStatistics();
    return;
  }
  if (into.seqLen() != other.seqLen() || into.dim() != other.dim() ||
      into.skipped_position_sum.rows() != other.skipped_position_sum.rows() || into.counts.size() != other.counts.size())
    throw std::invalid_argument("magnitude statistics do not match in shape");
  const Eigen::VectorXd a = into.absMax(), b = other.absMax();
  for (Eigen::Index i = 0; i < a.size(); ++i) {
    const auto at = static_cast<std::size_t>(i);
    // The larger wins; of equal ones, the lower window, then the lower position: what one
    // run over all the windows keeps (its first).
    const bool take = other.max_window[at] >= 0 &&
                      (into.max_window[at] < 0 || b[i] > a[i] ||
                       (b[i] == a[i] && std::tie(other.max_window[at], other.max_position[at]) <
                                            std::tie(into.max_window[at], into.max_position[at])));
    if (!take) continue;
    into.max_window[at] = other.max_window[at];
    into.max_position[at] = other.max_position[at];
    into.max_token[at] = other.max_token[at];
  }
  into.position_abs_max = into.position_abs_max.cwiseMax(other.position_abs_max);
  for (std::size_t k = 0; k < into.counts.size(); ++k) into.counts[k] += other.counts[k];
  into.skipped_position_sum += other.skipped_position_sum;
  into.position_square_sum += other.position_square_sum;
  into.context_square_sum += other.context_square_sum;
  into.context_square_sum_from_1 += other.context_square_sum_from_1;
}

}  // namespace posgeom::anova
