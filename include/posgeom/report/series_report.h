#pragma once
// series.html: the geometry of one model over its training, from the reports of a
// checkpoint series (`train --save-every`, analysed by `batch`): ranks, low-frequency
// energy and relative norm of every layer against the step, every head's ETC per step,
// and the heads of each class per step. Torch-free.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/report/run_summary.h"

namespace posgeom::report {

struct SeriesPoint {
  int64_t step = 0;
  RunSummary summary;                     // the checkpoint's summary.json
  std::optional<double> validation_loss;  // from its training.json, when it has one
};

// `points` in step order; the page for `title` (e.g. "default on licenses").
std::string seriesReport(const std::string& title, const std::vector<SeriesPoint>& points);

// Heads of each ETC class in one summary: {local, slow-decay, uniform}.
struct HeadClassCounts {
  int64_t local = 0, slow_decay = 0, uniform = 0;
};
HeadClassCounts headClassCounts(const RunSummary& summary);

}  // namespace posgeom::report
