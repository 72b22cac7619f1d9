#include "posgeom/metrics/fourier.h"

#include <cmath>

namespace posgeom::metrics {

Eigen::MatrixXd dctMatrix(Eigen::Index n) {
  Eigen::MatrixXd d(n, n);
  const double pi = std::acos(-1.0);
  for (Eigen::Index k = 0; k < n; ++k) {
    const double scale = std::sqrt((k == 0 ? 1.0 : 2.0) / static_cast<double>(n));
    for (Eigen::Index t = 0; t < n; ++t) d(k, t) = scale * std::cos(pi * (static_cast<double>(t) + 0.5) * static_cast<double>(k) / static_cast<double>(n));
  }
  return d;
}

Eigen::MatrixXd normalizedGram(const Eigen::MatrixXd& p) {
  Eigen::MatrixXd unit = p;
  for (Eigen::Index i = 0; i < unit.rows(); ++i) {
    const double norm = unit.row(i).norm();
    if (norm > 0) unit.row(i) /= norm;
  }
  return unit * unit.transpose();
}

Eigen::MatrixXd dct2(const Eigen::MatrixXd& g) {
  const Eigen::MatrixXd d = dctMatrix(g.rows());
  return d * g * d.transpose();
}

double lowFrequencyEnergy(const Eigen::MatrixXd& c, Eigen::Index k) {
  const double total = c.squaredNorm();
  if (total <= 0) return 0;
  const Eigen::Index r = std::min(k, c.rows()), q = std::min(k, c.cols());
  return c.topLeftCorner(r, q).squaredNorm() / total;
}

Eigen::VectorXd positionalPowerSpectrum(const Eigen::MatrixXd& p) {
  return (dctMatrix(p.rows()) * p).rowwise().squaredNorm();
}

}  // namespace posgeom::metrics
