#include "posgeom/jobs/kept_report.h"

#include <algorithm>
#include <vector>

#include "posgeom/base/error.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/json_file.h"
#include "posgeom/report/run_summary.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace keys = report::keys;
namespace {

// What batch adds to a run's summary.json: the run of the sweep that made it, as the
// sweep file gave it (its options as written, paths resolved).
nlohmann::json sweepRecord(const SweepRun& run) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [key, value] : run.options) options[key] = value;
  return {{keys::kModel, run.model},
          {keys::kCorpus, run.corpus},
          {keys::kVariant, run.variant},
          {keys::kCheckpoint, run.checkpoint},
          {keys::kOptions, options}};
}

// The options whose values differ: seq-len (then "64", now "32").
std::string optionsDifference(const nlohmann::json& then, const nlohmann::json& now) {
  std::vector<std::string> differ;
  auto text = [](const nlohmann::json& options, const std::string& key) {
    return !options.contains(key) ? std::string("not set") : options[key] == "" ? std::string("set") : options[key].dump();
  };
  for (const auto* side : {&then, &now})
    for (const auto& [key, value] : side->items())
      if (then.value(key, nlohmann::json()) != now.value(key, nlohmann::json()) &&
          std::find(differ.begin(), differ.end(), key) == differ.end())
        differ.push_back(key);
  for (auto& key : differ) key += " (then " + text(then, key) + ", now " + text(now, key) + ")";
  return joined(differ);
}

// The model and corpus files' identity as analyze records it (by content: the same files
// under another path are the same, other files under the same path are not).
std::string modelIdentity(const pass::AnalyzeOptions& job) {
  const auto dir = hub::modelDirectory(job.model, job.revision, hub::ModelParts::kWeights, io::processEnv());
  return io::modelFingerprint(dir) + " " + io::snapshotCommit(dir);
}

std::string corpusIdentity(const pass::AnalyzeOptions& job) {
  if (corpus::isGenerated(job.corpus.path) || job.corpus.path == "-") return "";
  std::vector<fs::path> files;
  for (const auto& f : corpus::corpusFiles(job.corpus.path)) files.emplace_back(f);
  if (!std::all_of(files.begin(), files.end(), [](const fs::path& f) { return fs::is_regular_file(f); })) return "";
  return io::fingerprintFiles(files);
}

}  // namespace

void recordSweepRun(const SweepRun& run, const fs::path& summary_path) {
  auto summary = report::RunSummary::read(summary_path).json();
  summary[keys::kSweep] = sweepRecord(run);
  io::writeTextFileAtomically(summary_path, summary.dump(2) + "\n");
}

std::string staleReason(const SweepRun& run, const pass::AnalyzeOptions& job, const fs::path& summary_path) {
  try {
    const auto summary = report::RunSummary::read(summary_path);
    const auto* recorded = summary.find(keys::kSweep);
    if (!recorded) return "its summary.json records no sweep run (analyze's own, or an older posgeom's)";
    const auto& then = *recorded;
    const auto now = sweepRecord(run);
    for (const char* key : {keys::kModel, keys::kCorpus, keys::kVariant, keys::kCheckpoint})
      if (then.value(key, nlohmann::json()) != now[key])
        return std::string("it is the report of ") + key + " " + then.value(key, nlohmann::json()).dump() + ", not " + now[key].dump();
    if (const auto difference = optionsDifference(then.value(keys::kOptions, nlohmann::json::object()), now[keys::kOptions]);
        !difference.empty())
      return "it was made with other options: " + difference;
    if (job.activations.empty() &&
        summary.text(keys::kModelFingerprint) + " " + summary.text(keys::kModelCommit) != modelIdentity(job))
      return "the model's files (its config or weights) are not the ones it was made from";
    if (job.activations.empty() && summary.text(keys::kCorpusFingerprint) != corpusIdentity(job))
      return "the corpus's files are not the ones it was made from";
  } catch (const InputError& e) {
    return std::string("it cannot be checked: ") + e.what();
  } catch (const nlohmann::json::exception& e) {
    return "its summary.json is not a report's: " + io::jsonErrorMessage(e);
  }
  return "";
}

}  // namespace posgeom::jobs
