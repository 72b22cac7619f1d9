#include "posgeom/heads/qk_subspace.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

TEST(QkSubspace, PlantedRankTwoPositionsAreFound) {
  const int t = 60, d = 20;
  Eigen::MatrixXd means(t, d);
  const Eigen::VectorXd u = Eigen::VectorXd::Unit(d, 3), v = Eigen::VectorXd::Unit(d, 7);
  srand(7);
  for (int i = 0; i < t; ++i)
    means.row(i) = (20 * std::cos(0.1 * i) * u + 20 * std::sin(0.1 * i) * v + 0.05 * Eigen::VectorXd::Random(d)).transpose();
  const Eigen::MatrixXd dirs = positionalSubspace(means, 5, 10, metrics::ScreeNotStrategy::kImpute);
  ASSERT_EQ(dirs.cols(), 2);
  EXPECT_NEAR((dirs.transpose() * u).norm(), 1.0, 1e-3);  // u and v lie in the span
  EXPECT_NEAR((dirs.transpose() * v).norm(), 1.0, 1e-3);
  // A bound larger than the matrix allows is lowered, not an error.
  EXPECT_GE(positionalSubspace(means.topRows(12), 5, 20, metrics::ScreeNotStrategy::kImpute).cols(), 1);
}

TEST(QkSubspace, EnergyInsideOutsideAndAtRandom) {
  const int d = 16, dh = 4;
  const Eigen::MatrixXd u = Eigen::MatrixXd::Identity(d, d).leftCols(3);
  HeadMaps inside{Eigen::MatrixXd::Zero(dh, d), Eigen::VectorXd::Zero(dh), Eigen::MatrixXd::Zero(dh, d), {}};
  inside.wq.leftCols(3) = Eigen::MatrixXd::Random(dh, 3);
  inside.wk.leftCols(3) = Eigen::MatrixXd::Random(dh, 3);
  EXPECT_NEAR(positionalEnergyShare(inside, u), 1.0, 1e-12);
  HeadMaps mixed = inside;
  mixed.wk.setZero();
  mixed.wk.rightCols(5) = Eigen::MatrixXd::Random(dh, 5);  // queries read positions, keys read the rest
  EXPECT_NEAR(positionalEnergyShare(mixed, u), 0.0, 1e-12);
  // Random maps: |U^T W U|^2 / |W|^2 near (r/d)^2 on average.
  double mean = 0;
  const int trials = 200;
  for (int i = 0; i < trials; ++i) {
    const HeadMaps random{Eigen::MatrixXd::Random(dh, d), Eigen::VectorXd::Zero(dh), Eigen::MatrixXd::Random(dh, d), {}};
    mean += positionalEnergyShare(random, u) / trials;
  }
  EXPECT_NEAR(mean, 9.0 / 256.0, 0.01);
}

}  // namespace
}  // namespace posgeom::testing
