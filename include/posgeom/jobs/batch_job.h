#pragma once
// `posgeom batch CONFIG`: a sweep of `analyze` runs (models x corpora x variants) from one
// file in configs/, with one report directory per run and a combined table laid out like
// the paper's Table 1. Torch-free header.
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/jobs/analyze_job.h"
#include "posgeom/pass/options.h"

namespace posgeom::jobs {

// One run: the analyze options of [analyze], then of its model's, corpus's and variant's
// tables (later ones win). Keys starting with "table-" belong to the sweep, not analyze.
struct SweepRun {
  std::string name;  // model-corpus, plus -variant when there are several
  std::string model, corpus, variant;  // their keys in the config
  // A checkpoint of a series ([models.x] model = "DIR/step_*" or a list of directories):
  // its directory's name, and the step its name ends with (step_1200, checkpoint-500).
  std::string checkpoint;
  std::optional<int64_t> step;
  std::vector<std::pair<std::string, std::string>> options;  // analyze option names without -- and values ("" for a flag)
  std::vector<std::string> table_columns;  // Table-1 columns this run provides
  std::vector<int64_t> table_layers;       // layers the table shows (empty: all)
  std::string table_layers_key;            // where table-layers was set ("<file>: [models.x].table-layers"), for messages
  std::filesystem::path reference;         // the `check` reference for this model and corpus (empty: the sweep has none)
};

struct Sweep {
  std::filesystem::path config;
  std::filesystem::path out;
  std::vector<SweepRun> runs;
};

// The options a sweep's tables may give analyze (its command line's, without --), each
// with whether it is a flag (a boolean in the sweep). Empty: not checked here.
using OptionCatalog = std::map<std::string, bool>;

// The columns a table-columns list may name: a layer's numbers in summary.json, and
// context_similarity and head_classes.
const std::vector<std::string>& tableColumnNames();

// Values that start with ./ or ../ are paths relative to the config file; everything else
// (hub names, absolute paths, "random") is passed as written. A model's `model` may name
// a series of checkpoints: a list of directories, or a pattern (* and ? in its last
// component) whose matches run in step order. Throws InputError naming the file (and the
// table and key) for anything malformed: a key that is not in `analyze_options`, a name
// that is not a plain directory name, two runs that would write one directory, a
// `reference` directory that does not hold every model and corpus's reference.
Sweep readSweep(const std::filesystem::path& config, const OptionCatalog& analyze_options = {});

// Turns a run's options into the job (the CLI parses them exactly as `analyze` would).
using JobFactory = std::function<pass::AnalyzeOptions(const SweepRun& run)>;

struct RunOutcome {
  // ok; kept (its report from an earlier run, without --force); skipped (a model or corpus
  // is not available, or bad input); failed
  std::string status;
  std::string message;
  std::optional<bool> check_passed;  // with a reference
  std::string check_summary;
  bool ran() const { return status == "ok" || status == "kept"; }
};

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
