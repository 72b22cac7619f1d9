#include "posgeom/jobs/report_writer.h"

#include <algorithm>
#include <chrono>
#include <thread>
#include <string>

#include <spdlog/spdlog.h>

#include "posgeom/base/progress.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/pass/device_moment_solver.h"
#include "posgeom/pass/memory_estimate.h"
#include "posgeom/report/tables.h"

namespace posgeom::jobs {
namespace {
constexpr int64_t kNarrowLayer = 2048;
}  // namespace


metrics::LayerMetricsOptions metricOptions(const pass::ReportOptions& r) {
  metrics::LayerMetricsOptions o;
  o.screenot_k = r.screenot_k;
  o.screenot_strategy = r.screenot_strategy;
  o.lowfreq_k = r.lowfreq_k;
  o.moment_solver = pass::momentSolverFor(r.end_device);
  return o;
}

unsigned metricsWorkers(const anova::AnalysisState& state, const metrics::MomentSolver& solver) {
  if (state.layers.size() < 2) return 1;
  const auto& first = state.layers.front();
  // Narrow layers: one per core, each on one thread (OpenBLAS's threads spend more time
  // handing work over than working on matrices this small). Wide ones: the tridiagonal
  // reduction that dominates them is bound by memory and gains little past a few threads,
  // so four threads a layer (on two cores, one layer at a time: two side by side were 5%
  // slower at d = 4096). With the eigenvalues on a GPU, what is left on the cores is
  // O(T d^2): one layer per core again.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const bool narrow = first.dim() <= kNarrowLayer || !solver.usesCpuCores();
  const unsigned wanted = narrow ? cores : std::max(1u, cores / 4);
  if (wanted <= 1) return 1;
  const auto available = pass::availableMemory(runtime::DeviceSpec{});
  if (!available) return wanted;
  const int64_t per_layer = std::max<int64_t>(1, metrics::layerMetricsBytes(first.dim(), first.positions()));
  return static_cast<unsigned>(std::clamp<int64_t>(*available / per_layer, 1, wanted));
}

void writeReport(const anova::AnalysisState& state, const pass::ReportOptions& options, const std::filesystem::path& out,
                 const std::vector<heads::HeadReport>& head_reports, const ReportExtras& extras) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto metric_options = metricOptions(options);
  const auto& solver = *metric_options.moment_solver;
  if (!state.layers.empty() && state.layers.front().hasSecondMoment())
    spdlog::info("metrics: the {} x {} eigenvalue problems by {}", state.layers.front().dim(), state.layers.front().dim(),
                 solver.name());
  ProgressLine progress("metrics", static_cast<int64_t>(state.layers.size()), "layers");
  int64_t done = 0;
  const auto layers = metrics::computeAllLayerMetrics(state.layers, metric_options, metricsWorkers(state, solver),
                                                      [&](int64_t layer) { progress.update(++done, 0, "layer " + std::to_string(layer)); });
  progress.finish();
  std::vector<metrics::CrossLayerMetrics> cross;
  for (std::size_t i = 1; i < layers.size(); ++i) cross.push_back(metrics::compareLayers(layers[i - 1], layers[i]));
  auto settings = state.settings;
  settings["version"] = POSGEOM_VERSION;
  settings["report"] = {{"screenot_k", options.screenot_k},
                        {"screenot_strategy", metrics::screeNotStrategyName(options.screenot_strategy)},
                        {"lowfreq_k", metrics::lowFreqK(options.lowfreq_k, layers.empty() ? metrics::kDefaultLowFreqK
                                                                                          : layers.front().gram_dct.rows())}};
  settings["timings"]["metrics_s"] = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  settings["timings"]["metrics_solver"] = solver.name();
  auto summary = report::summaryJson(settings, layers, cross, head_reports);
  for (const auto& [key, value] : extras.summary.items()) summary[key] = value;
  for (const auto& [name, contents] : extras.files) io::writeTextFileAtomically(out / name, contents);
  report::writeTables(out, summary, layers, head_reports);
}

}  // namespace posgeom::jobs
