#include "posgeom/jobs/baseline_job.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// The positional basis of the sinusoidal embedding, written from its definition.
TEST(BaselineJob, PositionalBasisIsTheCentredSinusoidalEmbedding) {
  ScratchDir s;
  const int64_t dim = 16, t = 12;
  pass::ReportOptions report;
  report.screenot_k = 3;
  jobs::runSinusoidalBaseline(dim, t, s / "b", report);
  Eigen::MatrixXd pe(t, dim);
  for (int64_t p = 0; p < t; ++p)
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * static_cast<double>(i) / dim);
      pe(p, 2 * i) = std::sin(angle);
      pe(p, 2 * i + 1) = std::cos(angle);
    }
  const Eigen::MatrixXd want = pe.rowwise() - pe.colwise().mean();
  const Eigen::MatrixXd got = readCsv(s / "b/pos_L0.csv");
  ASSERT_EQ(got.rows(), t);
  EXPECT_LT((got - want).cwiseAbs().maxCoeff(), 1e-9);
  const auto summary = summaryOf(s / "b");
  EXPECT_EQ(summary["source"], "sinusoidal baseline");
  EXPECT_EQ(summary["report"]["screenot_k"], 3);
}

TEST(BaselineJob, TheDefaultScreeNotBoundIsCutToTheEmbedding) {
  // 12 positions: ScreeNOT's imputation takes k with 2k + 1 < 12, so 5 (the default 20
  // used to fail the run on an option the user never gave).
  ScratchDir s;
  jobs::runSinusoidalBaseline(16, 12, s / "b", {});
  EXPECT_EQ(summaryOf(s / "b")["report"]["screenot_k"], 5);
  pass::ReportOptions given;
  given.screenot_k = 20;
  given.screenot_k_given = true;
  EXPECT_THROW(jobs::runSinusoidalBaseline(16, 12, s / "c", given), InputError);
  EXPECT_FALSE(std::filesystem::exists(s / "c"));
}

TEST(BaselineJob, OddDimensionsAreRefused) {
  ScratchDir s;
  EXPECT_THROW(jobs::runSinusoidalBaseline(15, 12, s / "b", {}), InputError);
  EXPECT_THROW(jobs::runSinusoidalBaseline(16, 1, s / "b", {}), InputError);
  EXPECT_FALSE(std::filesystem::exists(s / "b"));
}

// Far too large for memory: refused before the embedding is made (used to be bad_alloc).
TEST(BaselineJob, ABaselineBeyondTheMemoryIsRefusedFirst) {
  ScratchDir s;
  try {
    jobs::runSinusoidalBaseline(int64_t{1} << 24, int64_t{1} << 20, s / "b", {});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("baseline: --dim 16777216 and --seq-len 1048576 need about "), std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(s / "b"));
}

}  // namespace
}  // namespace posgeom::testing
