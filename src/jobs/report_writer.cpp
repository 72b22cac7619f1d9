#include "posgeom/jobs/report_writer.h"

#include <chrono>
#include <string>

#include "posgeom/base/progress.h"
#include "posgeom/report/tables.h"

namespace posgeom::jobs {

metrics::LayerMetricsOptions metricOptions(const pass::ReportOptions& r) {
  metrics::LayerMetricsOptions o;
  o.screenot_k = r.screenot_k;
  o.screenot_strategy = r.screenot_strategy;
  o.lowfreq_k = r.lowfreq_k;
  return o;
}

void writeReport(const anova::AnalysisState& state, const pass::ReportOptions& options, const std::filesystem::path& out,
                 const std::vector<heads::HeadReport>& head_reports) {
  const auto t0 = std::chrono::steady_clock::now();
  std::vector<metrics::LayerMetrics> layers;
  const auto metric_options = metricOptions(options);
  ProgressLine progress("metrics", static_cast<int64_t>(state.layers.size()), "layers");
  for (const auto& s : state.layers) {
    progress.update(static_cast<int64_t>(layers.size()), 0, "layer " + std::to_string(s.layer));
    layers.push_back(metrics::computeLayerMetrics(s, metric_options));
  }
  progress.finish();
  std::vector<metrics::CrossLayerMetrics> cross;
  for (std::size_t i = 1; i < layers.size(); ++i) cross.push_back(metrics::compareLayers(layers[i - 1], layers[i]));
  auto settings = state.settings;
  settings["version"] = POSGEOM_VERSION;
  settings["report"] = {{"screenot_k", options.screenot_k},
                        {"screenot_strategy", metrics::screeNotStrategyName(options.screenot_strategy)},
                        {"lowfreq_k", options.lowfreq_k}};
  settings["timings"]["metrics_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  report::writeTables(out, report::summaryJson(settings, layers, cross, head_reports), layers, head_reports);
}

}  // namespace posgeom::jobs
