#pragma once
// report.html: one self-contained page (inline CSS and SVG, no scripts, nothing fetched)
// with the run's identity, the per-layer table and every figure.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/heads/head_analysis.h"
#include "posgeom/metrics/layer_metrics.h"

namespace posgeom::report {

std::string htmlReport(const nlohmann::json& summary, const std::vector<metrics::LayerMetrics>& layers,
                       const std::vector<heads::HeadReport>& heads);

}  // namespace posgeom::report
