#pragma once
// sum x x^T over rows x of float activations, kept in float64: the d x d second moment
// that dominates the analysis' own cost. Part of the accumulators (Torch).
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

namespace posgeom::anova {

class GramSum {
 public:
  GramSum(int64_t dim, const at::Device& device);

  // rows [n, d] (any float dtype): adds rows^T rows.
  void add(const at::Tensor& rows);
  // The symmetric float64 sum [d, d].
  at::Tensor sum() const;
  // Continues from a symmetric float64 sum [d, d] (a saved run's).
  void set(const at::Tensor& symmetric);
  // Whether the BLAS's symmetric rank-k update does half the products (CPU, float32).
  bool symmetricUpdate() const { return triangular_; }

 private:
  at::Tensor sum_;      // float64; with triangular_, only its lower triangle is the sum
  at::Tensor scratch_;  // float32 [d, d]: one block's product
  bool triangular_ = false;
};

// Rows per float32 product: short enough that a block's sums keep float32's ~1e-7
// relative precision (the blocks are added in float64), long enough for ssyrk to run near
// GEMM speed: one window at T = 512 took 9.0 ms per 2048 x 768 batch, 256-row blocks 10.9.
inline constexpr int64_t kGramBlockRows = 512;

}  // namespace posgeom::anova
