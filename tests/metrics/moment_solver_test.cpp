#include "posgeom/metrics/moment_solver.h"

#include <gtest/gtest.h>

namespace posgeom::testing {
namespace {

// Q diag(planted) Q^T with Q orthogonal from a QR of a random matrix.
Eigen::MatrixXd withEigenvalues(const Eigen::VectorXd& planted, unsigned seed) {
  std::srand(seed);
  const Eigen::Index n = planted.size();
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(Eigen::MatrixXd::Random(n, n));
  const Eigen::MatrixXd q = qr.householderQ();
  return q * planted.asDiagonal() * q.transpose();
}

TEST(MomentSolver, LapackGivesThePlantedEigenvaluesDescendingFromTheLowerTriangle) {
  const Eigen::VectorXd planted = Eigen::VectorXd::LinSpaced(40, -3.0, 50.0);
  Eigen::MatrixXd m = withEigenvalues(planted, 7);
  m.triangularView<Eigen::StrictlyUpper>().setConstant(1e6);  // never read
  const auto solver = metrics::lapackMomentSolver();
  const auto values = solver->eigenvalues(m);
  ASSERT_EQ(values.size(), 40);
  for (Eigen::Index i = 0; i < 40; ++i) EXPECT_NEAR(values[i], planted[39 - i], 1e-12 * 50) << i;
  EXPECT_EQ(solver->name(), "LAPACK");
  EXPECT_TRUE(solver->usesCpuCores());
  EXPECT_EQ(metrics::lapackMomentSolver().get(), solver.get());  // one, shared
}

}  // namespace
}  // namespace posgeom::testing
