#include "posgeom/metrics/lapack.h"

#include <Eigen/Eigenvalues>
#include <Eigen/SVD>
#include <dlfcn.h>

#include "test_support.h"

namespace posgeom::testing {
namespace {

Eigen::MatrixXd randomMatrix(Eigen::Index rows, Eigen::Index cols, unsigned seed) {
  std::srand(seed);
  return Eigen::MatrixXd::Random(rows, cols);
}

// Against Eigen's own solvers (the implementation before LAPACK): the largest difference
// relative to the largest value, which is what the reports' numbers can move by.
TEST(Lapack, EigenvaluesOfASymmetricMatrixAsEigenGivesThem) {
  const Eigen::MatrixXd x = randomMatrix(300, 120, 1);
  const Eigen::MatrixXd moment = x.transpose() * x;
  const Eigen::VectorXd ours = metrics::lapack::symmetricEigenvalues(moment);
  const Eigen::VectorXd eigen =
      Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(moment, Eigen::EigenvaluesOnly).eigenvalues().reverse();
  ASSERT_EQ(ours.size(), 120);
  for (Eigen::Index i = 1; i < ours.size(); ++i) EXPECT_GE(ours[i - 1], ours[i]);  // descending
  const double largest = (ours - eigen).cwiseAbs().maxCoeff() / eigen[0];
  EXPECT_LT(largest, 1e-13) << largest;
}

TEST(Lapack, LargestEigenvalueByLanczosIsTheLargest) {
  for (const auto& [rows, cols] : {std::pair<int, int>{300, 120}, {50, 200}, {1000, 64}}) {
    Eigen::MatrixXd x = randomMatrix(rows, cols, 2);
    x.rowwise() += Eigen::RowVectorXd::Constant(cols, 0.1);  // hidden states: a mean, a big first eigenvalue
    const Eigen::MatrixXd moment = x.transpose() * x;
    const double want = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(moment, Eigen::EigenvaluesOnly).eigenvalues().maxCoeff();
    EXPECT_NEAR(metrics::lapack::largestEigenvalue(moment), want, 1e-12 * want) << rows << "x" << cols;
  }
  // No gap at the top (a multiple of the identity) and a rank-one matrix.
  EXPECT_NEAR(metrics::lapack::largestEigenvalue(3.0 * Eigen::MatrixXd::Identity(40, 40)), 3.0, 1e-12);
  const Eigen::VectorXd u = randomMatrix(40, 1, 3);
  EXPECT_NEAR(metrics::lapack::largestEigenvalue(u * u.transpose()), u.squaredNorm(), 1e-12 * u.squaredNorm());
  EXPECT_EQ(metrics::lapack::largestEigenvalue(Eigen::MatrixXd::Zero(5, 5)), 0.0);
}

TEST(Lapack, SingularValuesAndRightVectorsOfWideAndTallMatrices) {
  for (const auto& [rows, cols] : {std::pair<int, int>{40, 300}, {300, 40}}) {
    const Eigen::MatrixXd p = randomMatrix(rows, cols, 4);
    const Eigen::BDCSVD<Eigen::MatrixXd> eigen(p, Eigen::ComputeThinV);
    const auto ours = metrics::lapack::thinSvd(p);
    ASSERT_EQ(ours.values.size(), 40);
    EXPECT_LT((ours.values - eigen.singularValues()).cwiseAbs().maxCoeff() / eigen.singularValues()[0], 1e-13);
    EXPECT_LT((metrics::lapack::singularValues(p) - ours.values).cwiseAbs().maxCoeff(), 1e-12);
    ASSERT_EQ(ours.right.rows(), cols);
    ASSERT_EQ(ours.right.cols(), 40);
    // P v_i = s_i u_i with orthonormal u: |P v_i| = s_i, and the v_i orthonormal.
    for (Eigen::Index i = 0; i < 40; ++i) EXPECT_NEAR((p * ours.right.col(i)).norm(), ours.values[i], 1e-10);
    EXPECT_LT((ours.right.transpose() * ours.right - Eigen::MatrixXd::Identity(40, 40)).cwiseAbs().maxCoeff(), 1e-12);
    // Each vector's largest entry positive, and the same subspace as Eigen's up to sign.
    for (Eigen::Index i = 0; i < 5; ++i) {
      Eigen::Index top = 0;
      ours.right.col(i).cwiseAbs().maxCoeff(&top);
      EXPECT_GT(ours.right(top, i), 0);
      EXPECT_NEAR(std::abs(ours.right.col(i).dot(eigen.matrixV().col(i))), 1.0, 1e-10);
    }
  }
  EXPECT_EQ(metrics::lapack::singularValues(Eigen::MatrixXd()).size(), 0);
}

// OpenBLAS's thread setting inside the guard, and restored after it.
TEST(Lapack, LimitedThreadsLimitsAndRestores) {
  using Get = int (*)();
  auto* get = reinterpret_cast<Get>(dlsym(RTLD_DEFAULT, "openblas_get_num_threads"));
  if (!get) {
    ASSERT_FALSE(runningInCi()) << "CI installs OpenBLAS (tools/bootstrap): its LAPACK must be the one loaded";
    GTEST_SKIP() << "not OpenBLAS's LAPACK";
  }
  const int before = get();
  {
    const metrics::lapack::LimitedThreads limited(1);
    EXPECT_EQ(get(), 1);
    // Still right with one thread.
    const Eigen::MatrixXd x = randomMatrix(60, 30, 5);
    EXPECT_NEAR(metrics::lapack::symmetricEigenvalues(x.transpose() * x)[0], metrics::lapack::singularValues(x)[0] *
                                                                                 metrics::lapack::singularValues(x)[0],
                1e-9);
  }
  EXPECT_EQ(get(), before);
}

}  // namespace
}  // namespace posgeom::testing
