#include "posgeom/jobs/batch_job.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <set>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/json_file.h"
#include "posgeom/io/path_lock.h"
#include "posgeom/jobs/kept_report.h"
#include "posgeom/model/architecture.h"
#include "posgeom/report/check.h"
#include "posgeom/report/run_summary.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace keys = report::keys;
namespace {

// The reference restricted to what a run provides, so that a run is checked on its columns only.
nlohmann::json referenceFor(const nlohmann::json& reference, const std::vector<std::string>& columns) {
  nlohmann::json out = nlohmann::json::object();
  if (reference.contains(report::kReferenceTolerances)) out[report::kReferenceTolerances] = reference[report::kReferenceTolerances];
  const bool context = std::find(columns.begin(), columns.end(), keys::kContextSimilarity) != columns.end();
  if (context && reference.contains(keys::kContextSimilarity)) out[keys::kContextSimilarity] = reference[keys::kContextSimilarity];
  if (reference.contains(keys::kLayers)) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : reference[keys::kLayers]) {
      nlohmann::json kept = {{keys::kLayer, l.at(keys::kLayer)}};
      for (const auto& c : columns)
        if (l.contains(c)) kept[c] = l[c];
      if (kept.size() > 1) layers.push_back(kept);
    }
    if (!layers.empty()) out[keys::kLayers] = layers;
  }
  return out;
}

// table-layers that a run's model does not have (or its --layer leaves out), found before
// any run where the model's config can be read; a model that cannot be read is the run's
// own fault, reported when it runs.
void checkTableLayers(const SweepRun& run, const pass::AnalyzeOptions& job) {
  if (run.table_layers.empty() || !job.activations.empty()) return;
  int64_t hidden_states = 0;
  try {
    hidden_states = model::loadModelConfig(io::resolveModelDir(job.model, io::processEnv(), job.revision)).num_layers + 1;
  } catch (const InputError&) {
    return;
  }
  std::vector<int64_t> layers = job.layers.indices;
  if (job.layers.all())
    for (int64_t l = 0; l < hidden_states; ++l) layers.push_back(l);
  std::string listed;
  for (const auto l : layers) listed += (listed.empty() ? "" : ",") + std::to_string(l);
  for (const auto l : run.table_layers)
    if (std::find(layers.begin(), layers.end(), l) == layers.end())
      throw InputError(run.table_layers_key, std::to_string(l) + " is not a layer of run " + run.name + " (" +
                                                 (job.layers.all() ? "its model's hidden states are 0 to " + std::to_string(hidden_states - 1)
                                                                   : "its layer option selects " + listed) +
                                                 ")");
}

// A series whose checkpoints are not one architecture (another model_type, width or depth)
// draws them on one page as if they were: said, the sweep goes on.
void warnOfMixedSeries(const Sweep& sweep, const std::function<pass::AnalyzeOptions(const SweepRun&)>& make) {
  std::map<std::string, std::pair<std::string, std::string>> first;  // model -> (checkpoint, architecture)
  std::set<std::string> seen;                                        // model/checkpoint
  for (const auto& run : sweep.runs) {
    if (!run.step || !seen.insert(run.model + "/" + run.checkpoint).second) continue;
    const auto job = make(run);
    std::string architecture;
    try {
      const auto c = model::loadModelConfig(io::resolveModelDir(job.model, io::processEnv(), job.revision));
      architecture = c.model_type + " of " + std::to_string(c.num_layers) + " layers " + std::to_string(c.hidden_size) + " wide";
    } catch (const InputError&) {
      continue;  // the run says why when it runs
    }
    const auto [it, fresh] = first.emplace(run.model, std::make_pair(run.checkpoint, architecture));
    if (!fresh && it->second.second != architecture)
      spdlog::warn("{}: [models.{}] model: {} is a {}, {} a {}: the series page draws them as one model", sweep.config.string(), run.model,
                   run.checkpoint, architecture, it->second.first, it->second.second);
  }
}

}  // namespace

std::vector<RunOutcome> runSweep(const Sweep& sweep, const JobFactory& make_job) {
  auto* ranks = runtime::currentRanks();
  const bool writes = !ranks || ranks->root();
  if (sweep.out.empty()) throw InputError("out", "is empty: name the directory the sweep writes into");
  // One sweep at a time on an out: two would skip each other's runs and table them as skipped.
  std::unique_ptr<io::PathLock> lock;
  if (writes) lock = std::make_unique<io::PathLock>(sweep.out, "out (or --out)");
  std::error_code ec;
  if (writes) fs::create_directories(sweep.out, ec);
  if (ec) throw InputError(sweep.out.string(), "cannot create the sweep's output directory: " + ec.message());
  std::vector<RunOutcome> outcomes;
  for (std::size_t i = 0; i < sweep.runs.size(); ++i) {
    const auto& run = sweep.runs[i];
    spdlog::info("run {} of {}: {}", i + 1, sweep.runs.size(), run.name);
    RunOutcome outcome{RunStatus::kOk, "", std::nullopt, ""};
    try {
      pass::AnalyzeOptions job = make_job(run);
      job.out = sweep.out / run.name;
      // A sweep run again without --force keeps the reports it already has (and checks
      // them again) when they are this run's: only the runs that did not finish, or whose
      // model, corpus or options changed, run.
      std::string earlier;  // kept, or stale: a report of another run, replaced
      const fs::path summary = job.out / keys::kSummaryFile;
      if (!job.force && writes && fs::exists(summary)) {
        const auto why = staleReason(run, job, summary);
        earlier = why.empty() ? "kept" : "stale";
        if (!why.empty()) spdlog::info("{}: runs again: the report in {} is not this run's: {}", run.name, job.out.string(), why);
      }
      if (ranks) earlier = ranks->broadcastFromRoot(earlier);  // rank 0 sees the reports
      if (earlier == "kept") {
        outcome = {RunStatus::kKept, "the report of an earlier run (--force runs it again)", std::nullopt, ""};
        spdlog::info("{}: kept the report of an earlier run in {}", run.name, job.out.string());
      } else {
        job.force = job.force || earlier == "stale";  // batch's own output: replaced whole
        runAnalyzeJob(job);
        if (writes) recordSweepRun(run, summary);
      }
      if (!run.reference.empty() && writes) {
        const auto rows = report::checkAgainstReference(report::RunSummary::read(summary).json(),
                                                        referenceFor(io::readJsonFile(run.reference), run.table_columns), {},
                                                        run.reference.string());
        const auto moved = std::count_if(rows.begin(), rows.end(), [](const report::CheckRow& r) { return !r.ok; });
        outcome.check_passed = moved == 0;
        outcome.check_summary = std::to_string(rows.size() - static_cast<std::size_t>(moved)) + " of " + std::to_string(rows.size()) +
                                " values within tolerance of " + run.reference.filename().string();
        io::writeTextFileAtomically(job.out / "check.txt", report::formatCheck(rows, true));
      }
    } catch (const RunStopped&) {
      throw;  // Ctrl-C stops the sweep, not only the run in hand
    } catch (const InputError& e) {
      if (ranks) throw;  // every rank stops (see the header)
      outcome = {RunStatus::kSkipped, e.what(), std::nullopt, ""};
      spdlog::warn("{} skipped: {}", run.name, e.what());
    } catch (const std::exception& e) {
      if (ranks) throw;
      const std::string what = e.what();
      outcome = {RunStatus::kFailed, what.substr(0, what.find('\n')), std::nullopt, ""};
      spdlog::error("{} failed: {}", run.name, outcome.message);
    }
    outcomes.push_back(std::move(outcome));
  }
  if (writes) writeSweepTables(sweep, outcomes);
  return outcomes;
}

std::string BatchSummary::line() const {
  std::string s = std::to_string(ran) + " of " + std::to_string(runs) + " runs have a report";
  if (kept) s += " (" + std::to_string(kept) + " kept from an earlier run)";
  if (checked) s += "; " + std::to_string(checked - moved) + " of " + std::to_string(checked) + " checked runs matched their reference";
  if (skipped) s += "; " + std::to_string(skipped) + " skipped";
  if (failed) s += "; " + std::to_string(failed) + " failed";
  return s + (allPassed() ? ": " : " (see ") + table.string() + (allPassed() ? "" : ")");
}

BatchSummary runBatchJob(const BatchJob& job, const JobFactory& make_job) {
  auto sweep = readSweep(job.config, job.analyze_options);
  if (!job.out.empty()) sweep.out = job.out;
  auto make = [&](const SweepRun& run) {
    auto options = make_job(run);
    options.force = job.force;
    options.dist_init = job.dist_init;
    options.dist_timeout_s = job.dist_timeout_s;
    return options;
  };
  for (const auto& run : sweep.runs) checkTableLayers(run, make(run));  // a misspelt option fails before any run
  warnOfMixedSeries(sweep, make);
  // A distributed launch: the ranks meet once for the whole sweep, on the first run's device.
  runtime::RankGroup* ranks = nullptr;
  if (!sweep.runs.empty()) {
    const auto first = make(sweep.runs.front());
    ranks = runtime::joinRanks(job.dist_init, std::chrono::seconds(job.dist_timeout_s), first.device);
  }
  const auto outcomes = runSweep(sweep, make);
  BatchSummary summary;
  summary.reporting = !ranks || ranks->root();
  summary.runs = outcomes.size();
  for (const auto& o : outcomes) {
    summary.ran += o.ran();
    summary.kept += o.status == RunStatus::kKept;
    summary.skipped += o.status == RunStatus::kSkipped;
    summary.failed += o.status == RunStatus::kFailed;
    summary.checked += o.check_passed.has_value();
    summary.moved += o.check_passed.has_value() && !*o.check_passed;
  }
  summary.table = sweep.out / "table.md";
  return summary;
}

}  // namespace posgeom::jobs
