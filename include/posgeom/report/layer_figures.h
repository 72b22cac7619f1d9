#pragma once
// The per-layer figures of the paper and the across-layer overview, as SVG. Each returns
// one <figure> element: title in the SVG, a one-sentence caption of what to look for.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/metrics/layer_metrics.h"
#include "posgeom/report/run_summary.h"

namespace posgeom::report {

// One panel per layer (small multiples).
std::string gramFigure(const std::vector<metrics::LayerMetrics>& layers);
std::string combinedGramFigure(const std::vector<metrics::LayerMetrics>& layers);
std::string spiralFigure(const std::vector<metrics::LayerMetrics>& layers);
std::string singularValuesFigure(const std::vector<metrics::LayerMetrics>& layers);
// Issue 36: each layer's largest dimensions' |h| by position against its median (none
// without magnitude statistics: "").
std::string massiveActivationsFigure(const std::vector<metrics::LayerMetrics>& layers);
std::string dctFigure(const std::vector<metrics::LayerMetrics>& layers, int k = 10);
// The paper's Appendix B.2: the mean cosine between every pair of layers as a heatmap
// (fig-layer-cosines); "" where the run did not measure it (not --corpus random).
std::string layerCosinesFigure(const std::vector<metrics::LayerMetrics>& layers);

// Across layers, from the summary's per-layer rows and cross-layer list.
std::string normsFigure(const RunSummary& summary);
std::string similarityFigure(const RunSummary& summary);
std::string ranksFigure(const RunSummary& summary);

// <figure> with an id, a caption and the panels.
std::string figureElement(const std::string& id, const std::string& caption, const std::vector<std::string>& panels);

}  // namespace posgeom::report
