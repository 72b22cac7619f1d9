#include "posgeom/jobs/report_writer.h"

#include "posgeom/base/stopwatch.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/pass/metrics_stage.h"
#include "posgeom/report/tables.h"

namespace posgeom::jobs {

ComputedReport computeReport(const nlohmann::json& state_settings, const anova::StateLayers& state_layers,
                             const pass::ReportOptions& options, std::vector<heads::HeadReport> head_reports) {
  const auto t0 = SteadyClock::now();
  auto computed = pass::runMetricsStage(state_layers, options);
  const auto& layers = computed.layers;
  auto settings = state_settings;
  settings["version"] = POSGEOM_VERSION;
  settings["report"] = {{"screenot_k", options.screenot_k},
                        {"screenot_strategy", metrics::screeNotStrategyName(options.screenot_strategy)},
                        {"lowfreq_k", metrics::lowFreqK(options.lowfreq_k, layers.empty() ? metrics::kDefaultLowFreqK
                                                                                          : layers.front().gram_dct.rows())}};
  settings["timings"]["metrics_s"] = secondsSince(t0);
  settings["timings"]["metrics_solver"] = computed.solver;
  auto summary = report::summaryJson(settings, layers, computed.cross, head_reports);
  return {std::move(summary), std::move(computed.layers), std::move(head_reports)};
}

void writeReportFiles(const ComputedReport& computed, const std::filesystem::path& out, const ReportExtras& extras) {
  auto summary = computed.summary;
  for (const auto& [key, value] : extras.summary.items()) summary[key] = value;
  for (const auto& [name, contents] : extras.files) io::writeTextFileAtomically(out / name, contents);
  report::writeTables(out, summary, computed.layers, computed.head_reports);
}

void writeReport(const nlohmann::json& state_settings, const anova::StateLayers& state_layers, const pass::ReportOptions& options,
                 const std::filesystem::path& out, const std::vector<heads::HeadReport>& head_reports,
                 const ReportExtras& extras) {
  writeReportFiles(computeReport(state_settings, state_layers, options, head_reports), out, extras);
}

}  // namespace posgeom::jobs
