#include "posgeom/heads/qk_subspace.h"

#include <algorithm>

#include "posgeom/metrics/lapack.h"

namespace posgeom::heads {

PositionalBasis positionalBasis(const Eigen::MatrixXd& means, int64_t skip, int k, metrics::ScreeNotStrategy strategy) {
  const Eigen::MatrixXd rows = means.bottomRows(means.rows() - skip);
  const Eigen::MatrixXd centred = rows.rowwise() - rows.colwise().mean();
  const auto smaller = static_cast<int>(std::min(centred.rows(), centred.cols()));
  const int k_max = strategy == metrics::ScreeNotStrategy::kImpute ? (smaller - 2) / 2 : smaller - 1;
  const auto svd = metrics::lapack::thinSvd(centred);  // one SVD for the rank and the directions
  int rank = 1;
  if (std::min(k, k_max) >= 1)
    rank = std::max(1, metrics::screeNot(svd.values, centred.rows(), centred.cols(), std::min(k, k_max), strategy).rank);
  // Centring leaves at most rows - 1 directions: drop the ones of zero singular value.
  const double floor = svd.values.size() > 0 ? svd.values[0] * 1e-12 * static_cast<double>(std::max(centred.rows(), centred.cols())) : 0;
  Eigen::Index m = 0;
  while (m < svd.values.size() && svd.values[m] > floor) ++m;
  m = std::max<Eigen::Index>(m, 1);
  return {svd.right.leftCols(m), std::min<int64_t>(rank, m)};
}

Eigen::MatrixXd positionalSubspace(const Eigen::MatrixXd& means, int64_t skip, int k, metrics::ScreeNotStrategy strategy) {
  return positionalBasis(means, skip, k, strategy).top();
}

double positionalEnergyShare(const HeadMaps& head, const Eigen::MatrixXd& directions) {
  // Per-head norms (Qwen3) scale each query and key coordinate by their weights (and each
  // token by a positive factor, which leaves the subspace alone): fold the weights in. (A
  // DeepSeek key's rotary part escapes that factor: the share reads its maps as they are.)
  const Eigen::MatrixXd wq = head.q_norm.size() > 0 ? Eigen::MatrixXd(head.q_norm.asDiagonal() * head.wq) : head.wq;
  const Eigen::MatrixXd wk = head.k_norm.size() > 0 ? Eigen::MatrixXd(head.k_norm.asDiagonal() * head.wk) : head.wk;
  // |Wq^T Wk|_F^2 = sum of the elementwise product of the Gram matrices Wq Wq^T and Wk Wk^T.
  const double total = ((wq * wq.transpose()).array() * (wk * wk.transpose()).array()).sum();
  if (total <= 0) return 0;
  const Eigen::MatrixXd inside = (wq * directions).transpose() * (wk * directions);
  return inside.squaredNorm() / total;
}

}  // namespace posgeom::heads
