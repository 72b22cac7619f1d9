#include "posgeom/metrics/geometry.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Geometry, OrthogonalBasesAreIncoherent) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(3, 4), b = Eigen::MatrixXd::Zero(2, 4);
  a.col(0).setOnes();
  b.col(1).setOnes();
  const auto c = metrics::absCosines(a, b);
  EXPECT_NEAR(c.max, 0.0, 1e-15);
  b(0, 0) = 1;  // now 45 degrees for one pair
  EXPECT_NEAR(metrics::absCosines(a, b).max, std::sqrt(0.5), 1e-12);
}

TEST(Geometry, LabelClustersShowWithinVersusBetween) {
  Eigen::MatrixXd c(4, 2);
  c << 1, 0.1, 1, -0.1, 0.1, 1, -0.1, 1;
  const auto l = metrics::labelCosines(c, {"a", "a", "b", "b"});
  EXPECT_EQ(l.labels, 2);
  EXPECT_GT(l.within, 0.9);
  EXPECT_LT(l.between, 0.3);
}

TEST(Geometry, PrincipalAnglesOfOneSubspace) {
  const Eigen::MatrixXd p = Eigen::MatrixXd::Random(20, 6);
  const auto cosines = metrics::principalAngleCosines(p, 3.0 * p, 3);
  ASSERT_EQ(cosines.size(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_NEAR(cosines[i], 1.0, 1e-10);
  EXPECT_NEAR(metrics::matrixCosine(p, -p), -1.0, 1e-12);
  EXPECT_EQ(metrics::matrixCosine(p, Eigen::MatrixXd::Random(3, 3)), 0.0);
}

}  // namespace
}  // namespace posgeom::testing
