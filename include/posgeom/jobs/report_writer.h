#pragma once
// The end of every run that has statistics: the metrics of each layer, then summary.json,
// the CSV tables and report.html in `out`. Shared by analyze, merge and baseline.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/anova/state_layers.h"
#include "posgeom/heads/head_analysis.h"
#include "posgeom/metrics/layer_metrics.h"
#include "posgeom/pass/options.h"

namespace posgeom::jobs {

// What a stage after the heads adds to a report (--neurons): keys of summary.json, and files
// (name, contents) written before it.
struct ReportExtras {
  nlohmann::json summary = nlohmann::json::object();
  std::vector<std::pair<std::string, std::string>> files;
};

// A report's contents before they are files: summary.json's object and each layer's metrics
// (the CSVs and report.html are drawn from both). What the Python package's metrics() returns.
struct ComputedReport {
  nlohmann::json summary;
  std::vector<metrics::LayerMetrics> layers;
  std::vector<heads::HeadReport> head_reports;
};

// `settings`: the state's; its layers are read as the metrics take them.
ComputedReport computeReport(const nlohmann::json& settings, const anova::StateLayers& layers, const pass::ReportOptions& report,
                             std::vector<heads::HeadReport> head_reports = {});
// summary.json (with `extras`), the CSV tables and report.html in `out`.
void writeReportFiles(const ComputedReport& computed, const std::filesystem::path& out, const ReportExtras& extras = {});

// computeReport, then writeReportFiles.
void writeReport(const nlohmann::json& settings, const anova::StateLayers& layers, const pass::ReportOptions& report,
                 const std::filesystem::path& out, const std::vector<heads::HeadReport>& head_reports = {},
                 const ReportExtras& extras = {});
inline void writeReport(const anova::AnalysisState& state, const pass::ReportOptions& report, const std::filesystem::path& out,
                        const std::vector<heads::HeadReport>& head_reports = {}, const ReportExtras& extras = {}) {
  writeReport(state.settings, state.layers, report, out, head_reports, extras);
}

}  // namespace posgeom::jobs
