#include "posgeom/anova/decomposition.h"

#include <stdexcept>

namespace posgeom::anova {

Decomposition decompose(const LayerStatistics& s) {
  if (s.sequences <= 0) throw std::invalid_argument("no sequences were accumulated for layer " + std::to_string(s.layer));
  Decomposition d;
  const auto n = static_cast<double>(s.sequences);
  const auto t = static_cast<double>(s.positions());
  d.sequences = s.sequences;
  d.position_means = s.position_sum / n;
  d.global_mean = d.position_means.colwise().mean().transpose();
  d.positional = d.position_means.rowwise() - d.global_mean.transpose();
  d.context = s.context_means.rowwise() - d.global_mean.transpose();
  if (s.hasSecondMoment()) {
    // Balanced two-way ANOVA identities: the cross terms vanish because every sequence
    // has every position.
    const Eigen::MatrixXd positions_outer = d.position_means.transpose() * d.position_means;  // sum_t m m^T
    d.hidden_moment = s.second_moment;
    d.cvec_moment = s.second_moment - n * positions_outer;
    d.resid_moment = d.cvec_moment - t * s.context_second_moment + n * t * d.global_mean * d.global_mean.transpose();
  }
  return d;
}

}  // namespace posgeom::anova
