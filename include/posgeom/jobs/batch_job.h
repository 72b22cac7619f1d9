#pragma once
// `posgeom batch CONFIG`: a sweep of `analyze` runs (models x corpora x variants) from one
// file in configs/ (sweep_config.h), with one report directory per run and a combined table
// laid out like the paper's Table 1 (sweep_tables.h). Torch-free header.
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/sweep_config.h"
#include "posgeom/jobs/sweep_tables.h"
#include "posgeom/pass/options.h"

namespace posgeom::jobs {

// Turns a run's options into the job (the CLI parses them exactly as `analyze` would).
using JobFactory = std::function<pass::AnalyzeOptions(const SweepRun& run)>;

// Holds a lock on <out> for the whole sweep (a second sweep on it refuses). Runs every
// run into <out>/<name>, then writes <out>/table.csv (long form: model, step,
// corpus, metric, layer, value), <out>/table.md (Table 1 layout), <out>/sweep.json, and for
// each checkpoint series <out>/series-<model>-<corpus>.html (its geometry by step). Returns
// the outcomes in run order; every run ran and passed its check when all are "ok" and no
// check failed.
// A run whose directory already holds a report is kept only when the report is this run's:
// its summary.json records (under "sweep", which batch adds after the run) the same model,
// corpus, variant and options, and the same model and corpus files (their fingerprints);
// any other report in it is batch's own output of another run, and is run again.
// Under a distributed launch each run runs over all ranks (every rank's windows, rank 0's
// report) one after the other, and rank 0 alone writes the tables; a run that fails there
// stops the sweep on every rank (a rank cannot skip a run alone: the others wait for it in
// that run's collectives). Its reports so far stay, and the sweep run again keeps them.
std::vector<RunOutcome> runSweep(const Sweep& sweep, const JobFactory& make_job);

struct BatchJob {
  std::filesystem::path config;
  std::filesystem::path out;  // empty: the config's `out`
  OptionCatalog analyze_options;  // what the sweep's tables may set (empty: left to make_job)
  bool force = false;         // run again the runs that already have a report (else they are kept)
  std::string dist_init = "env";  // a distributed launch's rendezvous, for every run (analyze's --dist-init)
  int64_t dist_timeout_s = 1800;
};

struct BatchSummary {
  std::size_t runs = 0;
  std::size_t ran = 0;      // have a report: ran now, or kept from an earlier run
  std::size_t kept = 0;     // of those, kept
  std::size_t skipped = 0, failed = 0;
  std::size_t checked = 0;  // had a reference
  std::size_t moved = 0;    // of those, did not match it
  std::filesystem::path table;
  bool reporting = true;    // false on the ranks of a distributed run other than 0: they say nothing
  bool allPassed() const { return ran == runs && moved == 0; }
  // "4 of 8 runs have a report (1 kept from an earlier run); 3 of 4 checked runs matched
  // their reference; 4 skipped (see <table>)"
  std::string line() const;
};

// Reads the sweep, parses every run's options first (a misspelt one fails before any run),
// checks table-layers against the models' layers, then runs the sweep.
BatchSummary runBatchJob(const BatchJob& job, const JobFactory& make_job);

}  // namespace posgeom::jobs
