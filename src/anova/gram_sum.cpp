#include "posgeom/anova/gram_sum.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstddef>
#include <torch/version.h>

namespace posgeom::anova {
namespace {

// BLAS ssyrk_ (Fortran calling convention, trailing hidden lengths of the character
// arguments), found at run time: whichever BLAS LibTorch was linked with provides it; a
// LibTorch that keeps its BLAS private falls back to a full matrix product.
using Ssyrk = void (*)(const char* uplo, const char* trans, const int* n, const int* k, const float* alpha,
                       const float* a, const int* lda, const float* beta, float* c, const int* ldc, std::size_t,
                       std::size_t);

Ssyrk findSsyrk() {
  static const Ssyrk symbol = reinterpret_cast<Ssyrk>(dlsym(RTLD_DEFAULT, "ssyrk_"));
  return symbol;
}

}  // namespace

GramSum::GramSum(int64_t dim, const at::Device& device)
    : GramSum(dim, device, device.is_cpu() ? Blocking::kPerSequence : Blocking::kBatchBlocks) {}

GramSum::GramSum(int64_t dim, const at::Device& device, Blocking blocking)
    : sum_(at::zeros({dim, dim}, at::TensorOptions().dtype(at::kDouble).device(device))),
      triangular_(device.is_cpu() && blocking == Blocking::kPerSequence && findSsyrk() != nullptr),
      blocking_(blocking) {
  // Zeros once: ssyrk_ writes one triangle, the other stays zero.
  if (triangular_) scratch_ = at::zeros({dim, dim}, at::TensorOptions().dtype(at::kFloat));
  if (blocking_ == Blocking::kBatchBlocks) partial_ = at::zeros({dim, dim}, at::TensorOptions().dtype(at::kFloat).device(device));
}

at::Tensor GramSum::blockProduct(const at::Tensor& rows) const {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 9)
  // cuBLAS with half inputs, float32 output and accumulation: the tensor cores' rate.
  if (rows.is_cuda() && (rows.scalar_type() == at::kBFloat16 || rows.scalar_type() == at::kHalf))
    return at::mm(rows.t(), rows, at::kFloat);
#endif
  const auto x = rows.to(at::kFloat);
  return at::mm(x.t(), x);
}

void GramSum::addBatch(const at::Tensor& hidden) {
  if (blocking_ == Blocking::kPerSequence || hidden.scalar_type() == at::kDouble) {
    for (int64_t b = 0; b < hidden.size(0); ++b) add(hidden[b]);
    return;
  }
  const auto rows = hidden.reshape({-1, hidden.size(-1)});
  if (!partial_.defined()) partial_ = at::zeros_like(sum_, sum_.options().dtype(at::kFloat));
  int64_t blocks = 0;
  for (int64_t start = 0; start < rows.size(0); start += kGramBlockRows) {
    partial_.add_(blockProduct(rows.narrow(0, start, std::min(kGramBlockRows, rows.size(0) - start))));
    if (++blocks % kGramFlushBlocks == 0 || start + kGramBlockRows >= rows.size(0)) {
      sum_.add_(partial_);  // float32 read, float64 added: no float64 copy of the block
      partial_.zero_();
    }
  }
}

void GramSum::add(const at::Tensor& rows) {
  if (rows.scalar_type() == at::kDouble) {
    const auto product = at::mm(rows.t(), rows);
    sum_.add_(triangular_ ? product.tril() : product);
    return;
  }
  const auto x = rows.to(at::kFloat).contiguous();
  for (int64_t start = 0; start < x.size(0); start += kGramBlockRows) {
    const auto block = x.narrow(0, start, std::min(kGramBlockRows, x.size(0) - start));
    if (!triangular_) {
      sum_.add_(at::mm(block.t(), block).to(at::kDouble));
      continue;
    }
    // Row-major block [k, d] is the column-major d x k matrix A; A A^T into the column-major
    // upper triangle of scratch, which is its row-major lower triangle.
    const int n = static_cast<int>(block.size(1)), k = static_cast<int>(block.size(0));
    const float one = 1.0f, zero = 0.0f;
    findSsyrk()("U", "N", &n, &k, &one, block.data_ptr<float>(), &n, &zero, scratch_.data_ptr<float>(), &n, 1, 1);
    sum_.add_(scratch_);
  }
}

void GramSum::moveTo(const at::Device& device) {
  if (sum_.device() == device) return;
  sum_ = sum_.to(device);
  partial_ = at::Tensor();  // zero between batches: addBatch flushes its last blocks
}

int64_t GramSum::bytes() const {
  return heldBytes(sum_) + heldBytes(scratch_) + heldBytes(partial_);
}

at::Tensor GramSum::sum() const {
  if (!triangular_) return sum_;
  return sum_ + sum_.t() - at::diag_embed(sum_.diagonal());
}

void GramSum::set(const at::Tensor& symmetric) { sum_.copy_(triangular_ ? symmetric.tril() : symmetric); }

}  // namespace posgeom::anova
