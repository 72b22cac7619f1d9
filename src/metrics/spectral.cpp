#include "posgeom/metrics/spectral.h"

#include <algorithm>

namespace posgeom::metrics {

Eigen::VectorXd singularValues(const Eigen::MatrixXd& m) {
  if (m.size() == 0) return {};
  return Eigen::BDCSVD<Eigen::MatrixXd>(m).singularValues();
}

Eigen::VectorXd singularValuesFromMoment(const Eigen::MatrixXd& moment) {
  if (moment.size() == 0) return {};
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(moment, Eigen::EigenvaluesOnly);
  Eigen::VectorXd s = eig.eigenvalues().reverse().cwiseMax(0.0).cwiseSqrt();
  return s;
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
