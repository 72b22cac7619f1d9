#pragma once
// posgeom.metrics and posgeom.report: a state's numbers (summary.json's and the CSVs'),
// and the report directory of the CLI, written under the same output policy.
#include <filesystem>

#include "posgeom/jobs/report_writer.h"

namespace posgeom::python {

// Into `out` as analyze writes it (absent or empty, else replaced only with `force` when
// it holds a report alone); the state, when given, as its state.safetensors.
void writeReportDirectory(const jobs::ComputedReport& computed, const anova::AnalysisState* state,
                          const std::filesystem::path& out, bool force);

}  // namespace posgeom::python
