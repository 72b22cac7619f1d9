#include "posgeom/jobs/report_writer.h"

#include <algorithm>
#include <thread>

#include "anova_fixtures.h"
#include "report_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(ReportWriter, MetricsOfEveryLayerAndTheReportOptionsAsRun) {
  ScratchDir s;
  anova::AnalysisState state;
  state.settings = {{"tool", "posgeom"}, {"source", "test"}};
  state.windows = 10;
  state.layers = {directStatistics(randomSequences(10, 9, 6, 1), 1, 0), directStatistics(randomSequences(10, 9, 6, 2), 1, 1)};
  pass::ReportOptions report;
  report.screenot_k = 2;
  report.screenot_strategy = metrics::ScreeNotStrategy::kWinsorize;
  report.lowfreq_k = 3;
  jobs::writeReport(state, report, s.path());
  const auto summary = summaryOf(s.path());
  EXPECT_EQ(summary["report"]["screenot_strategy"], "w");
  EXPECT_EQ(summary["report"]["lowfreq_k"], 3);
  EXPECT_TRUE(summary["timings"].contains("metrics_s"));
  EXPECT_EQ(summary["timings"]["metrics_solver"], "LAPACK");  // a CPU run's
  ASSERT_EQ(summary["layers"].size(), 2u);
  const auto direct = metrics::computeLayerMetrics(state.layers[1], jobs::metricOptions(report));
  EXPECT_DOUBLE_EQ(summary["layers"][1]["stable_rank"].get<double>(), direct.stable_rank);
  EXPECT_EQ(summary["cross_layer"].size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(s / "report.html"));
}

TEST(ReportWriter, MetricOptionsAreTheReportOptions) {
  pass::ReportOptions report;
  report.screenot_k = 7;
  report.screenot_strategy = metrics::ScreeNotStrategy::kTransportToZero;
  report.lowfreq_k = 4;
  const auto o = jobs::metricOptions(report);
  EXPECT_EQ(o.screenot_k, 7);
  EXPECT_EQ(o.screenot_strategy, metrics::ScreeNotStrategy::kTransportToZero);
  EXPECT_EQ(o.lowfreq_k, 4);
  EXPECT_EQ(o.moment_solver->name(), "LAPACK");
  report.end_device = runtime::parseDevice("cuda:0");
  EXPECT_EQ(jobs::metricOptions(report).moment_solver->name(), "cuSOLVER (LibTorch) on cuda:0");
}

// Wide layers share the cores for LAPACK (four threads a layer); with the eigenvalues on a
// GPU what is left is O(T d^2) and each core takes a layer.
TEST(ReportWriter, WideLayersTakeOneCoreEachWhenTheirEigenvaluesAreOnADevice) {
  anova::AnalysisState state;
  for (int64_t l = 0; l < 4; ++l) {
    anova::LayerStatistics wide;
    wide.layer = l;
    wide.position_sum = Eigen::MatrixXd::Zero(8, 4096);
    state.layers.push_back(wide);
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  pass::ReportOptions report;
  EXPECT_EQ(jobs::metricsWorkers(state, *jobs::metricOptions(report).moment_solver), std::max(1u, cores / 4));
  report.end_device = runtime::parseDevice("cuda");
  EXPECT_EQ(jobs::metricsWorkers(state, *jobs::metricOptions(report).moment_solver), std::min(cores, 4u));
}

}  // namespace
}  // namespace posgeom::testing
