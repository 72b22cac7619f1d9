#include "posgeom/pass/device_moment_solver.h"

#include <stdexcept>

#include "posgeom/metrics/lapack.h"
#include "test_devices.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

class TorchMomentSolverOn : public ::testing::TestWithParam<std::string> {};

// LibTorch's eigvalsh on the device against LAPACK's dsyevd, on a moment X^T X (what the
// end stage hands it), its upper triangle garbage: only the lower one may be read.
TEST_P(TorchMomentSolverOn, GivesLapacksEigenvaluesDescendingFromTheLowerTriangle) {
  const auto device = runtime::parseDevice(GetParam());
  std::srand(11);
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(300, 160);
  Eigen::MatrixXd moment = x.transpose() * x;
  const auto expected = metrics::lapack::symmetricEigenvalues(moment);
  moment.triangularView<Eigen::StrictlyUpper>().setConstant(-1e3);
  const auto solver = pass::torchMomentSolver(device);
  const auto values = solver->eigenvalues(moment);
  ASSERT_EQ(values.size(), 160);
  const double largest = expected[0];
  double worst = 0;
  for (Eigen::Index i = 0; i < 160; ++i) worst = std::max(worst, std::abs(values[i] - expected[i]) / largest);
  RecordProperty("largest_difference_over_largest", std::to_string(worst));
  EXPECT_LT(worst, 1e-13);
  for (Eigen::Index i = 1; i < 160; ++i) EXPECT_GE(values[i - 1], values[i]);
  EXPECT_EQ(solver->eigenvalues(Eigen::MatrixXd(0, 0)).size(), 0);
  EXPECT_THROW(solver->eigenvalues(Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
  EXPECT_EQ(solver->usesCpuCores(), !device.isCuda());
}

INSTANTIATE_TEST_SUITE_P(Devices, TorchMomentSolverOn, ::testing::ValuesIn(testDevices()), deviceCaseName);

TEST(MomentSolverFor, LapackOnTheCpuAndLibTorchsSolverOnACudaDevice) {
  EXPECT_EQ(pass::momentSolverFor(runtime::DeviceSpec{}), metrics::lapackMomentSolver());
  // Made without touching the device: a CUDA run's report asks for it after its pass.
  const auto cuda = pass::momentSolverFor(runtime::parseDevice("cuda:1"));
  EXPECT_EQ(cuda->name(), "cuSOLVER (LibTorch) on cuda:1");
  EXPECT_FALSE(cuda->usesCpuCores());
}

}  // namespace
}  // namespace posgeom::testing
