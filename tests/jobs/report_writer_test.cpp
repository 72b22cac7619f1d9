#include "posgeom/jobs/report_writer.h"

#include "posgeom/pass/metrics_stage.h"

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
  const auto direct = metrics::computeLayerMetrics(state.layers[1], pass::metricOptions(report));
  EXPECT_DOUBLE_EQ(summary["layers"][1]["stable_rank"].get<double>(), direct.stable_rank);
  EXPECT_EQ(summary["cross_layer"].size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(s / "report.html"));
}

}  // namespace
}  // namespace posgeom::testing
