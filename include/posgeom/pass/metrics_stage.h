#pragma once
// The metrics end stage of every run that has statistics (analyze, merge, baseline, and
// bench's measure of it): each layer's metrics on as many workers as cores and memory
// allow, with the moment solver of the device the statistics were gathered on, and the
// comparison of consecutive layers. Torch-free.
#include <vector>

#include "posgeom/anova/state_layers.h"
#include "posgeom/metrics/layer_metrics.h"
#include "posgeom/pass/options.h"

namespace posgeom::pass {

// The metrics' options, their moment solver the one of `report.end_device`.
metrics::LayerMetricsOptions metricOptions(const ReportOptions& report);
// Layers whose end stage runs at once: the cores, fewer where memory holds fewer layers.
unsigned metricsWorkers(const anova::StateLayers& layers, const metrics::MomentSolver& solver);

struct RunMetrics {
  std::vector<metrics::LayerMetrics> layers;
  std::vector<metrics::CrossLayerMetrics> cross;  // layer i against layer i + 1
  std::string solver;                             // the moment solver's name
};

// `progress`: a progress line of layers (analyze, merge, baseline; not bench's timing).
RunMetrics runMetricsStage(const anova::StateLayers& layers, const ReportOptions& report, bool progress = true);

}  // namespace posgeom::pass
