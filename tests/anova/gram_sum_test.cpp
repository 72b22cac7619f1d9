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

}  // namespace
}  // namespace posgeom::testing
