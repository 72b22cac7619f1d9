#pragma once
// sum x x^T over rows x of float activations, kept in float64: the d x d second moment
// that dominates the analysis' own cost. Part of the accumulators (Torch).
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

namespace posgeom::anova {

// Bytes a tensor holds (0 for an undefined one): what the accumulators count of themselves.
inline int64_t heldBytes(const at::Tensor& t) { return t.defined() ? static_cast<int64_t>(t.nbytes()) : 0; }

class GramSum {
 public:
  // How a batch's hidden states [B, T', d] are cut into products.
  enum class Blocking {
    // Each sequence on its own (the CPU's): a sequence's float32 products do not depend on
    // which batch it came in, so runs with other batch sizes or ranks differ only in the
    // order of float64 additions.
    kPerSequence,
    // 512-row blocks of the whole batch (a GPU's): products in the activations' dtype with
    // float32 accumulation (tensor cores where they are bfloat16 or float16: their products
    // are exact in float32), summed in float32 over a few blocks and then added in float64,
    // with no float64 copy of the activations. One GEMM per sequence with a float64 add each
    // (the per-sequence way) made the second moment cost more than the forward on an H200,
    // by its published rates (issue 34).
    kBatchBlocks,
  };
  // The device's own blocking: per sequence on the CPU, batch blocks elsewhere.
  GramSum(int64_t dim, const at::Device& device);
  GramSum(int64_t dim, const at::Device& device, Blocking blocking);

  // rows [n, d] (any float dtype): adds rows^T rows, in 512-row float32 products.
  void add(const at::Tensor& rows);
  // A batch's hidden states [B, T', d]: adds every row's x x^T, blocked as constructed.
  void addBatch(const at::Tensor& hidden);
  // The symmetric float64 sum [d, d].
  at::Tensor sum() const;
  // Continues from a symmetric float64 sum [d, d] (a saved run's).
  void set(const at::Tensor& symmetric);
  // Moves the float64 sum to `device` (a layer-major pass parks a layer's sums on the host
  // between its blocks); the float32 block buffer is dropped and made again where the next
  // batch is added.
  void moveTo(const at::Device& device);
  // Whether the BLAS's symmetric rank-k update does half the products (CPU, float32).
  bool symmetricUpdate() const { return triangular_; }
  Blocking blocking() const { return blocking_; }
  // Bytes it holds: the float64 sum and a float32 d x d (a block's product, or the blocks'
  // float32 sum).
  int64_t bytes() const;

 private:
  // rows [k, d], k <= kGramBlockRows: rows^T rows in float32 (exact products of half types).
  at::Tensor blockProduct(const at::Tensor& rows) const;

  at::Tensor sum_;      // float64; with triangular_, only its lower triangle is the sum
  at::Tensor scratch_;  // float32 [d, d]: one block's product
  at::Tensor partial_;  // float32 [d, d]: kBatchBlocks' products since the last float64 add
  bool triangular_ = false;
  Blocking blocking_;
};

// Rows per float32 product: short enough that a block's sums keep float32's ~1e-7
// relative precision (the blocks are added in float64), long enough for ssyrk to run near
// GEMM speed: one window at T = 512 took 9.0 ms per 2048 x 768 batch, 256-row blocks 10.9.
inline constexpr int64_t kGramBlockRows = 512;
// kBatchBlocks: blocks summed in float32 before one float64 add (4096 rows): the float64
// add of a d x d matrix is the cost being cut, and a sum of 8 float32 products loses at
// most ~3 bits more than one (GramSum.BatchBlocksOfBfloat16KeepFloat32Precision bounds it).
inline constexpr int64_t kGramFlushBlocks = 8;

}  // namespace posgeom::anova
