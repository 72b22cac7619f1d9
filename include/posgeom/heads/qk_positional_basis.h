#pragma once
// A head's W_QK = W_Q^T W_K x scale (logit = x_n^T W_QK x_i) in the positional basis, as
// the paper's Fig. 5: its diagonal in the standard basis, and the rest seen in the basis of
// the positional basis P's right singular vectors, where it is sparse and concentrated in
// the top positional block. Nothing d x d is formed. Eigen only.
#include <Eigen/Dense>
#include <cstdint>

#include "posgeom/heads/positional_kernel.h"
#include "posgeom/heads/qk_subspace.h"

namespace posgeom::heads {

inline constexpr Eigen::Index kQkCornerSide = 60;

struct QkBasisReport {
  double diagonal_share = 0;  // |diag W_QK|^2 / |W_QK|^2
  // M = V^T (W_QK - diag W_QK) V over the basis' m directions V; entries with |M_ab| above
  // threshold = sqrt(2 log m^2) x the root mean square of M's entries are kept (the
  // universal threshold for m^2 entries of noise).
  double threshold = 0;
  int64_t kept = 0;         // entries above it
  double block_share = 0;   // of those, the share inside the top rank x rank block (NaN if none)
  int64_t basis_dims = 0;   // m
  Eigen::MatrixXd standard_corner;  // W_QK's top-left corner in the standard basis (diagonal visible)
  Eigen::MatrixXd kept_corner;      // M's top-left corner, zero below the threshold
};

// `scale` the head's logit scale (1/sqrt(dh) unless the model says otherwise). Per-head
// q/k norms fold their weights into W_Q, W_K; RoPE heads: W_QK without rotation.
// Costs 2 m d dh + m^2 (d + dh) multiply-adds.
QkBasisReport qkInPositionalBasis(const HeadMaps& head, const PositionalBasis& basis, double scale,
                                  Eigen::Index corner = kQkCornerSide);

}  // namespace posgeom::heads
