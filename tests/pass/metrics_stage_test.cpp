#include "posgeom/pass/metrics_stage.h"

#include <algorithm>
#include <thread>

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// The stage is each layer's metrics as computeLayerMetrics gives them alone, and each
// pair of consecutive layers compared, whatever the workers.
TEST(MetricsStage, EveryLayersMetricsAndConsecutiveLayersCompared) {
  anova::AnalysisState state;
  for (int64_t l = 0; l < 3; ++l) state.layers.push_back(directStatistics(randomSequences(10, 9, 6, 5 + l), 1, l));
  pass::ReportOptions report;
  report.screenot_k = 2;
  const auto run = pass::runMetricsStage(state, report, false);
  EXPECT_EQ(run.solver, "LAPACK");
  ASSERT_EQ(run.layers.size(), 3u);
  ASSERT_EQ(run.cross.size(), 2u);
  for (std::size_t l = 0; l < 3; ++l) {
    const auto alone = metrics::computeLayerMetrics(state.layers[l], pass::metricOptions(report));
    EXPECT_DOUBLE_EQ(run.layers[l].stable_rank, alone.stable_rank) << l;
  }
  const auto second = metrics::compareLayers(metrics::computeLayerMetrics(state.layers[1], pass::metricOptions(report)),
                                             metrics::computeLayerMetrics(state.layers[2], pass::metricOptions(report)));
  EXPECT_EQ(run.cross[1].from, second.from);
  EXPECT_EQ(run.cross[1].to, second.to);
  EXPECT_DOUBLE_EQ(run.cross[1].basis_cosine, second.basis_cosine);
  EXPECT_TRUE(run.cross[1].principal_cosines.isApprox(second.principal_cosines));
}

TEST(MetricsStage, MetricOptionsAreTheReportOptions) {
  pass::ReportOptions report;
  report.screenot_k = 7;
  report.screenot_strategy = metrics::ScreeNotStrategy::kTransportToZero;
  report.lowfreq_k = 4;
  const auto o = pass::metricOptions(report);
  EXPECT_EQ(o.screenot_k, 7);
  EXPECT_EQ(o.screenot_strategy, metrics::ScreeNotStrategy::kTransportToZero);
  EXPECT_EQ(o.lowfreq_k, 4);
  EXPECT_EQ(o.moment_solver->name(), "LAPACK");
  report.end_device = runtime::parseDevice("cuda:0");
  EXPECT_EQ(pass::metricOptions(report).moment_solver->name(), "cuSOLVER (LibTorch) on cuda:0");
}

// Wide layers share the cores for LAPACK (four threads a layer); with the eigenvalues on a
// GPU what is left is O(T d^2) and each core takes a layer.
TEST(MetricsStage, WideLayersTakeOneCoreEachWhenTheirEigenvaluesAreOnADevice) {
  anova::AnalysisState state;
  for (int64_t l = 0; l < 4; ++l) {
    anova::LayerStatistics wide;
    wide.layer = l;
    wide.position_sum = Eigen::MatrixXd::Zero(8, 4096);
    state.layers.push_back(wide);
  }
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  pass::ReportOptions report;
  EXPECT_EQ(pass::metricsWorkers(state, *pass::metricOptions(report).moment_solver), std::max(1u, cores / 4));
  report.end_device = runtime::parseDevice("cuda");
  EXPECT_EQ(pass::metricsWorkers(state, *pass::metricOptions(report).moment_solver), std::min(cores, 4u));
}

}  // namespace
}  // namespace posgeom::testing
