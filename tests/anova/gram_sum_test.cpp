#include "posgeom/anova/gram_sum.h"

#include "posgeom/runtime/threads.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// The float64 product of all rows: what the block sums must reproduce.
at::Tensor exactGram(const at::Tensor& rows) {
  const auto x = rows.to(at::kDouble);
  return at::mm(x.t(), x);
}

TEST(GramSum, EqualsTheFloat64ProductAcrossBlocks) {
  // A short call, then two full blocks and a short one; 37 columns: no alignment luck.
  const int64_t first = 250, n = first + 2 * anova::kGramBlockRows + 100;
  const auto rows = at::randn({n, 37});
  anova::GramSum gram(37, at::kCPU);
  gram.add(rows.narrow(0, 0, first));
  gram.add(rows.narrow(0, first, n - first));
  const auto sum = gram.sum();
  EXPECT_TRUE(at::allclose(sum, exactGram(rows), 1e-5, 1e-4));
  EXPECT_TRUE(at::equal(sum, sum.t()));  // symmetric to the last bit, not just closely
}

TEST(GramSum, UsesTheSymmetricUpdateOfTheBlas) {
  // OpenBLAS (installed by the bootstrap) has ssyrk_: half the products of a full GEMM.
  if (runningInCi() || !runtime::detectBlas().reference) {
    EXPECT_TRUE(anova::GramSum(8, at::kCPU).symmetricUpdate()) << runtime::detectBlas().path;
  }
}

TEST(GramSum, ContinuesFromASavedSum) {
  const auto first = at::randn({300, 16}), second = at::randn({200, 16});
  anova::GramSum saved(16, at::kCPU);
  saved.add(first);
  anova::GramSum resumed(16, at::kCPU);
  resumed.set(saved.sum());
  resumed.add(second);
  EXPECT_TRUE(at::allclose(resumed.sum(), exactGram(at::cat({first, second})), 1e-5, 1e-4));
}

TEST(GramSum, Float64RowsAreAddedExactly) {
  const auto rows = at::randn({10, 5}, at::kDouble);
  anova::GramSum gram(5, at::kCPU);
  gram.add(rows);
  EXPECT_TRUE(at::allclose(gram.sum(), exactGram(rows), 1e-14, 1e-14));
}

// A GPU's blocking, run here on the same code path: a batch of bfloat16 hidden states
// [10, 511, 48] (5110 rows: ten 512-row blocks, a float64 add after the eighth and the
// last) against the float64 product of the same values. Products of bfloat16 values are
// exact in float32, so only float32 accumulation separates them: ~1e-7 relative, where a
// product rounded to bfloat16 (the half-precision GEMM's own output) would be ~1e-3 off.
TEST(GramSum, BatchBlocksOfBfloat16KeepFloat32Precision) {
  const auto hidden = (at::randn({10, 511, 48}) + 3.0).to(at::kBFloat16);
  anova::GramSum gram(48, at::kCPU, anova::GramSum::Blocking::kBatchBlocks);
  EXPECT_FALSE(gram.symmetricUpdate());
  gram.addBatch(hidden.narrow(0, 0, 9));
  gram.addBatch(hidden.narrow(0, 9, 1));  // a call shorter than one block
  const auto exact = exactGram(hidden.reshape({-1, 48}));
  const double error = (gram.sum() - exact).abs().max().item<double>() / exact.abs().max().item<double>();
  EXPECT_LT(error, 1e-5);
}

// The CPU's blocking: each sequence its own products, as add() of each gives them, to the
// bit; so on the CPU a batch's composition changes only the order of float64 additions.
TEST(GramSum, PerSequenceBlockingIsEachSequenceOnItsOwn) {
  const auto hidden = at::randn({3, 600, 20}) + 1.0;
  anova::GramSum batched(20, at::kCPU);
  ASSERT_EQ(batched.blocking(), anova::GramSum::Blocking::kPerSequence);
  batched.addBatch(hidden);
  anova::GramSum each(20, at::kCPU);
  for (int64_t b = 0; b < 3; ++b) each.add(hidden[b]);
  EXPECT_TRUE(at::equal(batched.sum(), each.sum()));
}

}  // namespace
}  // namespace posgeom::testing
