#include "posgeom/metrics/fourier.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Fourier, DctIsOrthonormal) {
  const auto d = metrics::dctMatrix(16);
  EXPECT_TRUE((d * d.transpose()).isApprox(Eigen::MatrixXd::Identity(16, 16), 1e-12));
}

TEST(Fourier, ASmoothBasisHasItsEnergyAtLowFrequencies) {
  const int t = 64;
  Eigen::MatrixXd smooth(t, 2), rough(t, 2);
  for (int i = 0; i < t; ++i) {
    smooth.row(i) << std::cos(2 * M_PI * i / t), std::sin(2 * M_PI * i / t);
    rough.row(i) << (i % 2 ? 1.0 : -1.0), ((i / 2) % 2 ? 1.0 : -1.0);
  }
  const double smooth_energy = metrics::lowFrequencyEnergy(metrics::dct2(metrics::normalizedGram(smooth)), 10);
  const double rough_energy = metrics::lowFrequencyEnergy(metrics::dct2(metrics::normalizedGram(rough)), 10);
  EXPECT_GT(smooth_energy, 0.95);
  EXPECT_LT(rough_energy, 0.1);
  const auto spectrum = metrics::positionalPowerSpectrum(smooth);
  Eigen::Index peak;
  spectrum.maxCoeff(&peak);
  EXPECT_LE(peak, 3);
  EXPECT_NEAR(spectrum.sum(), smooth.squaredNorm(), 1e-9);  // Parseval
}

TEST(Fourier, GramRowsAreUnitCosines) {
  const Eigen::MatrixXd p = Eigen::MatrixXd::Random(5, 3);
  const auto g = metrics::normalizedGram(p);
  for (int i = 0; i < 5; ++i) EXPECT_NEAR(g(i, i), 1.0, 1e-12);
}

}  // namespace
}  // namespace posgeom::testing
