#include "posgeom/pass/metrics_stage.h"

#include <algorithm>
#include <memory>
#include <string>
#include <thread>

#include "posgeom/base/log.h"
#include "posgeom/base/progress.h"
#include "posgeom/pass/device_moment_solver.h"
#include "posgeom/pass/memory_estimate.h"

namespace posgeom::pass {
namespace {
constexpr int64_t kNarrowLayer = 2048;
}  // namespace

metrics::LayerMetricsOptions metricOptions(const ReportOptions& r) {
  metrics::LayerMetricsOptions o;
  o.screenot_k = r.screenot_k;
  o.screenot_strategy = r.screenot_strategy;
  o.lowfreq_k = r.lowfreq_k;
  o.moment_solver = momentSolverFor(r.end_device);
  return o;
}

unsigned metricsWorkers(const anova::StateLayers& layers, const metrics::MomentSolver& solver) {
  if (layers.size() < 2) return 1;
  const auto& first = layers.shape(0);
  // Narrow layers: one per core, each on one thread (OpenBLAS's threads spend more time
  // handing work over than working on matrices this small). Wide ones: the tridiagonal
  // reduction that dominates them is bound by memory and gains little past a few threads,
  // so four threads a layer (on two cores, one layer at a time: two side by side were 5%
  // slower at d = 4096). With the eigenvalues on a GPU, what is left on the cores is
  // O(T d^2): one layer per core again.
  const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
  const bool narrow = first.dim <= kNarrowLayer || !solver.usesCpuCores();
  const unsigned wanted = narrow ? cores : std::max(1u, cores / 4);
  if (wanted <= 1) return 1;
  const auto available = availableMemory(runtime::DeviceSpec{});
  if (!available) return wanted;
  const int64_t per_layer = std::max<int64_t>(1, metrics::layerMetricsBytes(first.dim, first.positions));
  return static_cast<unsigned>(std::clamp<int64_t>(*available / per_layer, 1, wanted));
}

RunMetrics runMetricsStage(const anova::StateLayers& layers, const ReportOptions& report, bool progress) {
  const auto options = metricOptions(report);
  const auto& solver = *options.moment_solver;
  RunMetrics run;
  run.solver = solver.name();
  if (progress && !layers.empty() && layers.shape(0).second_moment)
    log::info("metrics: the " + std::to_string(layers.shape(0).dim) + " x " + std::to_string(layers.shape(0).dim) +
              " eigenvalue problems by " + solver.name());
  std::unique_ptr<ProgressLine> line;
  if (progress) line = std::make_unique<ProgressLine>("metrics", static_cast<int64_t>(layers.size()), "layers");
  int64_t done = 0;
  run.layers = metrics::computeAllLayerMetrics(layers, options, metricsWorkers(layers, solver), [&](int64_t layer) {
    if (line) line->update(++done, 0, "layer " + std::to_string(layer));
  });
  if (line) line->finish();
  for (std::size_t i = 1; i < run.layers.size(); ++i) run.cross.push_back(metrics::compareLayers(run.layers[i - 1], run.layers[i]));
  return run;
}

}  // namespace posgeom::pass
