#include "posgeom/metrics/spectral.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Spectral, SingularValuesAgreeWithTheMomentRoute) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(30, 6);
  const auto direct = metrics::singularValues(x);
  const auto from_moment = metrics::singularValuesFromMoment(x.transpose() * x);
  EXPECT_TRUE(direct.isApprox(from_moment, 1e-10));
  EXPECT_GE(direct[0], direct[5]);
}

TEST(Spectral, StableRankAndExplainedRatio) {
  const Eigen::Vector3d s(2, 1, 1);
  EXPECT_DOUBLE_EQ(metrics::stableRank(s), 6.0 / 4.0);
  EXPECT_DOUBLE_EQ(metrics::explainedRatio(s, 1), 0.5);
  EXPECT_DOUBLE_EQ(metrics::explainedRatio(s, 3), 1.0);
  EXPECT_DOUBLE_EQ(metrics::stableRank(Eigen::Vector3d::Zero()), 0.0);
}

}  // namespace
}  // namespace posgeom::testing
