#pragma once
// What a sweep writes beside its runs' reports: <out>/table.csv (long form: model, step,
// corpus, metric, layer, value), <out>/table.md (the paper's Table 1 layout, a row a model,
// checkpoint and corpus, with notes for the runs that have no report), <out>/sweep.json
// (every run's outcome) and for each checkpoint series <out>/series-<title>.html (its
// geometry by step). Torch-free header.
#include <optional>
#include <string>
#include <vector>

#include "posgeom/jobs/sweep_config.h"

namespace posgeom::jobs {

// ok; kept (its report from an earlier run, without --force); skipped (a model or corpus
// is not available, or bad input); failed
enum class RunStatus { kOk, kKept, kSkipped, kFailed };
// "ok", "kept", "skipped", "failed": the names sweep.json and table.md write.
std::string runStatusName(RunStatus status);

struct RunOutcome {
  RunStatus status = RunStatus::kOk;
  std::string message;
  std::optional<bool> check_passed;  // with a reference
  std::string check_summary;
  bool ran() const { return status == RunStatus::kOk || status == RunStatus::kKept; }
};

// Writes the tables from the summary.json of every run that ran (`outcomes` in run order).
void writeSweepTables(const Sweep& sweep, const std::vector<RunOutcome>& outcomes);

}  // namespace posgeom::jobs
