#pragma once
// Whether the report already in a sweep run's directory is this run's, and so kept when the
// sweep runs again without --force: batch records the run that made a report in its
// summary.json (under "sweep"), and analyze the model's and corpus's fingerprints.
// Torch-free header.
#include <filesystem>
#include <string>

#include "posgeom/jobs/sweep_config.h"
#include "posgeom/pass/options.h"

namespace posgeom::jobs {

// Adds to the run's summary.json, under "sweep", the run of the sweep that made it, as the
// sweep file gave it: its model, corpus, variant, checkpoint and options (paths resolved).
void recordSweepRun(const SweepRun& run, const std::filesystem::path& summary_path);

// Why the report at `summary_path` is not this run's ("" when it is): it records no sweep
// run, or another model, corpus, variant, checkpoint or options, or (unless the run reads
// --activations) the model's or corpus's files are not the ones it was made from.
std::string staleReason(const SweepRun& run, const pass::AnalyzeOptions& job, const std::filesystem::path& summary_path);

}  // namespace posgeom::jobs
