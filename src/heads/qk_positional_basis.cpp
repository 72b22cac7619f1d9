#include "posgeom/heads/qk_positional_basis.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace posgeom::heads {

QkBasisReport qkInPositionalBasis(const HeadMaps& head, const PositionalBasis& basis, double scale, Eigen::Index corner) {
  const Eigen::MatrixXd wq = head.q_norm.size() > 0 ? Eigen::MatrixXd(head.q_norm.asDiagonal() * head.wq) : head.wq;
  const Eigen::MatrixXd wk = head.k_norm.size() > 0 ? Eigen::MatrixXd(head.k_norm.asDiagonal() * head.wk) : head.wk;
  const Eigen::MatrixXd& v = basis.directions;  // [d, m]
  QkBasisReport r;
  r.basis_dims = v.cols();
  // diag(W_QK)_k = scale sum_j wq[j,k] wk[j,k]; |W_QK|^2 from the dh x dh Gram matrices.
  const Eigen::VectorXd diagonal = scale * (wq.array() * wk.array()).colwise().sum().transpose();
  const double total = scale * scale * ((wq * wq.transpose()).array() * (wk * wk.transpose()).array()).sum();
  r.diagonal_share = total > 0 ? diagonal.squaredNorm() / total : 0;
  // M = scale (W_Q V)^T (W_K V) - V^T diag V.
  Eigen::MatrixXd m = scale * (wq * v).transpose() * (wk * v);
  m.noalias() -= v.transpose() * (diagonal.asDiagonal() * v);
  // The spread about zero (root mean square): unlike the spread about the mean, it does
  // not depend on the signs of the basis vectors.
  const double entries = static_cast<double>(m.size());
  r.threshold = std::sqrt(2 * std::log(std::max(entries, 2.0))) * std::sqrt(m.squaredNorm() / entries);
  const Eigen::Array<bool, Eigen::Dynamic, Eigen::Dynamic> above = m.array().abs() > r.threshold;
  r.kept = above.count();
  const Eigen::Index rank = std::min<Eigen::Index>(basis.rank, m.rows());
  const auto in_block = above.topLeftCorner(rank, rank).count();
  r.block_share = r.kept > 0 ? static_cast<double>(in_block) / static_cast<double>(r.kept)
                             : std::numeric_limits<double>::quiet_NaN();
  const Eigen::Index side = std::min(corner, m.rows());
  r.kept_corner = above.topLeftCorner(side, side).select(m.topLeftCorner(side, side), 0.0);
  const Eigen::Index standard = std::min<Eigen::Index>(corner, wq.cols());
  r.standard_corner = scale * wq.leftCols(standard).transpose() * wk.leftCols(standard);
  return r;
}

}  // namespace posgeom::heads
