#pragma once
// How much of a head's bilinear form W = W_Q^T W_K (logit = x_n^T W x_i / sqrt(dh)) acts
// inside the positional subspace of its input. Eigen only.
#include <Eigen/Dense>
#include <algorithm>

#include "posgeom/heads/positional_kernel.h"
#include "posgeom/metrics/screenot.h"

namespace posgeom::heads {

// The positional basis of a block's mean attention inputs (positions from `skip` on,
// centred over positions): the right singular vectors [d, m] of every non-zero singular
// value, largest first, and the rank r <= m that ScreeNOT keeps with upper bound k
// (lowered to what the matrix allows), at least one.
struct PositionalBasis {
  Eigen::MatrixXd directions;  // [d, m], orthonormal
  int64_t rank = 1;
  Eigen::MatrixXd top() const { return directions.leftCols(std::min<Eigen::Index>(rank, directions.cols())); }
};
PositionalBasis positionalBasis(const Eigen::MatrixXd& means, int64_t skip, int k, metrics::ScreeNotStrategy strategy);

// Its top r directions [d, r]: the positional subspace.
Eigen::MatrixXd positionalSubspace(const Eigen::MatrixXd& means, int64_t skip, int k, metrics::ScreeNotStrategy strategy);

// |U^T W U|_F^2 / |W|_F^2 for U = `directions` (orthonormal columns). A random subspace
// of dimension r in d gets (r/d)^2 on average. RoPE heads: W without rotation (offset 0).
double positionalEnergyShare(const HeadMaps& head, const Eigen::MatrixXd& directions);

}  // namespace posgeom::heads
