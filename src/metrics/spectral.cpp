#include "posgeom/metrics/spectral.h"

#include <algorithm>

#include "posgeom/metrics/lapack.h"

namespace posgeom::metrics {

Eigen::VectorXd singularValues(const Eigen::MatrixXd& m) {
  return lapack::singularValues(m);
}

Eigen::VectorXd singularValuesFromMoment(const Eigen::MatrixXd& moment, const MomentSolver& solver) {
  return solver.eigenvalues(moment).cwiseMax(0.0).cwiseSqrt();
}

double stableRank(const Eigen::VectorXd& s) {
  if (s.size() == 0 || s[0] <= 0) return 0;
  return s.squaredNorm() / (s[0] * s[0]);
}

double explainedRatio(const Eigen::VectorXd& s, int rank) {
  const double total = s.sum();
  if (total <= 0) return 0;
  return s.head(std::min<Eigen::Index>(rank, s.size())).sum() / total;
}

}  // namespace posgeom::metrics
