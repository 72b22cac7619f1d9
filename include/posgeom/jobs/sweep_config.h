#pragma once
// A `posgeom batch` sweep file (TOML or JSON, in configs/): read and checked whole before
// any run, into one run per model x corpus x variant, each with its analyze options and its
// table's columns and layers. Torch-free header.
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// The title of the series page a checkpoint's run is drawn on: the run's name without its
// checkpoint, <model>-<corpus>[-<variant>].
std::string seriesTitle(const SweepRun& run);

// Items as one line of a message or a table cell: "a, b, c".
std::string joined(const std::vector<std::string>& items, const std::string& separator = ", ");

}  // namespace posgeom::jobs
