#pragma once
// How much of a head's bilinear form W = W_Q^T W_K (logit = x_n^T W x_i / sqrt(dh)) acts
// inside the positional subspace of its input. Eigen only.
#include <Eigen/Dense>

#include "posgeom/heads/positional_kernel.h"
#include "posgeom/metrics/screenot.h"

namespace posgeom::heads {

// The top principal directions [d, r] of a block's mean attention inputs (positions from
// `skip` on, centred over positions): as many as ScreeNOT keeps with upper bound k
// (lowered to what the matrix allows), at least one.
Eigen::MatrixXd positionalSubspace(const Eigen::MatrixXd& means, int64_t skip, int k, metrics::ScreeNotStrategy strategy);

// |U^T W U|_F^2 / |W|_F^2 for U = `directions` (orthonormal columns). A random subspace
// of dimension r in d gets (r/d)^2 on average. RoPE heads: W without rotation (offset 0).
double positionalEnergyShare(const HeadMaps& head, const Eigen::MatrixXd& directions);

}  // namespace posgeom::heads
