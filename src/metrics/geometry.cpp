#include "posgeom/metrics/geometry.h"

#include <map>

#include "posgeom/metrics/lapack.h"

namespace posgeom::metrics {
namespace {
Eigen::MatrixXd unitRows(const Eigen::MatrixXd& m) {
  Eigen::MatrixXd u = m;
  for (Eigen::Index i = 0; i < u.rows(); ++i) {
    const double n = u.row(i).norm();
    if (n > 0) u.row(i) /= n;
  }
  return u;
}
}  // namespace

CosineSummary absCosines(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() == 0 || b.rows() == 0) return {};
  const Eigen::MatrixXd c = (unitRows(a) * unitRows(b).transpose()).cwiseAbs();
  return {c.maxCoeff(), c.mean()};
}

LabelCosines labelCosines(const Eigen::MatrixXd& contexts, const std::vector<std::string>& labels) {
  LabelCosines out;
  std::map<std::string, int> ids;
  for (const auto& l : labels) ids.emplace(l, static_cast<int>(ids.size()));
  out.labels = static_cast<int>(ids.size());
  if (contexts.rows() < 2) return out;
  const Eigen::MatrixXd c = (unitRows(contexts) * unitRows(contexts).transpose()).cwiseAbs();
  double within = 0, between = 0;
  int64_t nw = 0, nb = 0;
  for (Eigen::Index i = 0; i < c.rows(); ++i)
    for (Eigen::Index j = i + 1; j < c.cols(); ++j) {
      if (labels[static_cast<size_t>(i)] == labels[static_cast<size_t>(j)]) {
        within += c(i, j);
        ++nw;
      } else {
        between += c(i, j);
        ++nb;
      }
    }
  out.within = nw ? within / static_cast<double>(nw) : 0;
  out.between = nb ? between / static_cast<double>(nb) : 0;
  return out;
}

double matrixCosine(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return 0;
  const double n = a.norm() * b.norm();
  return n > 0 ? (a.array() * b.array()).sum() / n : 0;
}

Eigen::MatrixXd topDirections(const Eigen::MatrixXd& p, Eigen::Index r) {
  const auto svd = lapack::thinSvd(p);
  return svd.right.leftCols(std::min(r, svd.right.cols()));
}

Eigen::VectorXd principalAngleCosines(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::Index r) {
  if (a.cols() != b.cols() || r <= 0) return {};
  return principalAngleCosinesOf(topDirections(a, r), topDirections(b, r));
}

Eigen::VectorXd principalAngleCosinesOf(const Eigen::MatrixXd& va, const Eigen::MatrixXd& vb) {
  if (va.rows() != vb.rows() || va.cols() == 0) return {};
  return lapack::singularValues(va.transpose() * vb);
}

}  // namespace posgeom::metrics
