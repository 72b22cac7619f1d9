#include "posgeom/metrics/screenot.h"

#include <cstring>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/io/safetensors.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

Eigen::MatrixXd matrixOf(const io::TensorView& v) {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> m(v.shape[0], v.shape[1]);
  std::memcpy(m.data(), v.data, v.nbytes);
  return m;
}

TEST(ScreeNot, ReproducesTheReferenceThresholdsAndRanks) {
  POSGEOM_REQUIRE_SHARED("fixtures/metrics/screenot_expected.json");
  const auto expected = io::readJsonFile(sharedDir() / "fixtures/metrics/screenot_expected.json");
  const auto cases = io::SafetensorsFile::open(sharedDir() / "fixtures/metrics/screenot_cases.safetensors");
  const double tolerance = expected.at("tolerance_threshold_abs").get<double>();
  int checked = 0, errors = 0;
  for (const auto& c : expected.at("cases")) {
    const auto y = matrixOf(cases.get(c.at("name").get<std::string>()));
    for (const char* strategy : {"0", "w", "i"}) {
      const auto& want = c.at(strategy);
      const auto run = [&] { return metrics::screeNot(y, c.at("k").get<int>(), metrics::parseScreeNotStrategy(strategy)); };
      if (want.contains("error")) {
        EXPECT_THROW(run(), InputError) << c.at("name") << " " << strategy;
        ++errors;
        continue;
      }
      const auto got = run();
      EXPECT_NEAR(got.threshold, want.at("threshold").get<double>(), tolerance) << c.at("name") << " " << strategy;
      EXPECT_EQ(got.rank, want.at("rank").get<int>()) << c.at("name") << " " << strategy;
      ++checked;
    }
  }
  EXPECT_GE(checked, 20);
  EXPECT_GE(errors, 1);
}

TEST(ScreeNot, KAtLeastTheSmallerDimensionIsAnError) {
  const Eigen::MatrixXd y = Eigen::MatrixXd::Random(10, 6);
  EXPECT_THROW(metrics::screeNot(y, 6, metrics::ScreeNotStrategy::kWinsorize), InputError);
  EXPECT_NO_THROW(metrics::screeNot(y, 5, metrics::ScreeNotStrategy::kWinsorize));
  EXPECT_THROW(metrics::parseScreeNotStrategy("x"), InputError);
}

TEST(ScreeNot, RankCheckRefusesWhatScreeNotWouldRefuse) {
  const Eigen::MatrixXd y = Eigen::MatrixXd::Random(12, 9);
  for (const auto strategy : {metrics::ScreeNotStrategy::kWinsorize, metrics::ScreeNotStrategy::kImpute})
    for (int k = 0; k < 12; ++k) {
      bool refused = false, check_refused = false;
      try {
        metrics::screeNot(y, k, strategy);
      } catch (const InputError&) {
        refused = true;
      }
      try {
        metrics::checkScreeNotRank(k, strategy, 9);
      } catch (const InputError&) {
        check_refused = true;
      }
      EXPECT_EQ(refused, check_refused) << "k=" << k;
    }
  EXPECT_THROW(metrics::checkScreeNotRank(4, metrics::ScreeNotStrategy::kImpute, 9), InputError);  // 2k+1 = 9
  EXPECT_NO_THROW(metrics::checkScreeNotRank(4, metrics::ScreeNotStrategy::kWinsorize, 9));
}

TEST(ScreeNot, FindsAPlantedLowRankSignal) {
  std::srand(3);
  const Eigen::MatrixXd noise = Eigen::MatrixXd::Random(200, 100) * 0.1;
  const Eigen::MatrixXd signal = 5.0 * Eigen::MatrixXd::Random(200, 2) * Eigen::MatrixXd::Random(2, 100);
  EXPECT_EQ(metrics::screeNot(Eigen::MatrixXd(signal + noise), 10, metrics::ScreeNotStrategy::kImpute).rank, 2);
}

}  // namespace
}  // namespace posgeom::testing
