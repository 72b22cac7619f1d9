#include "posgeom/report/tables.h"

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Tables, SummaryHasTheDesignKeysAndCsvFilesParse) {
  ScratchDir s;
  metrics::LayerMetricsOptions o;
  o.screenot_k = 2;  // d = 6 leaves room for 2k+1 < 6
  std::vector<metrics::LayerMetrics> layers{metrics::computeLayerMetrics(directStatistics(randomSequences(10, 9, 6, 1), 1, 0), o),
                                            metrics::computeLayerMetrics(directStatistics(randomSequences(10, 9, 6, 2), 1, 1), o)};
  const auto summary = report::summaryJson({{"model", "m"}}, layers, {metrics::compareLayers(layers[0], layers[1])});
  for (const char* key : {"layer", "screenot_rank", "stable_rank", "explained_ratio", "relative_norm", "lowfreq_energy",
                          "incoherence_max"})
    EXPECT_TRUE(summary["layers"][0].contains(key)) << key;
  EXPECT_EQ(summary["model"], "m");
  EXPECT_EQ(summary["cross_layer"].size(), 1u);
  // The even/odd labels of the fixture give label cosines; their mean and spread over layers:
  const double b0 = layers[0].label_cosines->between, b1 = layers[1].label_cosines->between;
  EXPECT_NEAR(summary["context_similarity"]["b_mean"].get<double>(), (b0 + b1) / 2, 1e-15);
  EXPECT_NEAR(summary["context_similarity"]["b_std"].get<double>(), std::abs(b0 - b1) / 2, 1e-15);
  EXPECT_NEAR(summary["context_similarity"]["w_mean"].get<double>(),
              (layers[0].label_cosines->within + layers[1].label_cosines->within) / 2, 1e-15);
  report::writeTables(s.path(), summary, layers);
  for (const char* f : {"summary.json", "report.html", "layers.csv", "pos_L1.csv", "gram_L0.csv", "gram_dct_L0.csv", "spiral_L1.csv",
                        "singular_values_L0.csv", "power_spectrum_L1.csv"})
    EXPECT_TRUE(std::filesystem::exists(s / f)) << f;
  const auto csv = readFile(s / "layers.csv");
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  const auto gram = readFile(s / "gram_L0.csv");
  EXPECT_EQ(std::count(gram.begin(), gram.end(), '\n'), 8);
  for (const auto& e : std::filesystem::directory_iterator(s.path()))
    EXPECT_EQ(e.path().string().find(".tmp."), std::string::npos) << "left a temporary file";
}

TEST(Tables, MatrixCsvKeepsFullPrecision) {
  Eigen::MatrixXd m(1, 2);
  m << 0.1, 1.0 / 3.0;
  EXPECT_EQ(report::matrixCsv(m, {"a", "b"}), "a,b\n0.10000000000000001,0.33333333333333331\n");
}

}  // namespace
}  // namespace posgeom::testing
