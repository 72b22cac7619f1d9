#include "posgeom/jobs/analyze_job.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "posgeom/anova/state_file.h"
#include "posgeom/base/environment.h"
#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/jobs/default_corpus.h"
#include "posgeom/jobs/output_directory.h"
#include "posgeom/jobs/report_writer.h"
#include "posgeom/pass/activations_pass.h"
#include "posgeom/pass/analysis_run.h"
#include "posgeom/pass/plan.h"
#include "posgeom/report/neuron_tables.h"
#include "posgeom/report/summary_keys.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace {

// `output` null: a rank of a distributed run other than rank 0, which writes nothing.
pass::RunControl runControl(const pass::AnalyzeOptions& o, const OutputDirectory* output) {
  pass::RunControl control;
  control.out = o.out;
  control.save_every = o.save_every;
  control.stop_after = o.stop_after;
  if (!output) {
    control.resume_state = o.resume;  // named in messages; rank 0 reads it
    return control;
  }
  control.state_file = output->work() / kStateFile;
  if (!o.resume.empty()) control.resume_state = output->resumeState();
  return control;
}

// --neurons' keys of summary.json and its table.
ReportExtras neuronExtras(const pass::AnalysisRun& run) {
  ReportExtras extras;
  if (!run.neurons) return extras;
  extras.summary[report::keys::kNeurons] = report::neuronsJson(*run.neurons, run.token_names);
  extras.files.emplace_back("neurons.csv", report::neuronsCsv(*run.neurons, run.token_names));
  return extras;
}

}  // namespace

fs::path defaultModelDir() {
  if (const char* env = std::getenv("POSGEOM_DEFAULT_MODEL"); env && *env) return env;
  return POSGEOM_DEFAULT_MODEL_DIR;
}

ComputedReport runAnalyzeJob(const pass::AnalyzeOptions& requested) {
  pass::AnalyzeOptions o = requested;
  const bool from_activations = !o.activations.empty();
  if (!from_activations && o.model.empty()) {
    o.model = defaultModelDir().string();
    if (!fs::exists(o.model + "/config.json"))
      throw InputError(o.model, "the bundled default model is missing; give --model (or set POSGEOM_DEFAULT_MODEL)");
    spdlog::info("no --model: using the bundled default model {}", o.model);
  }
  if (!from_activations && o.corpus.path.empty()) {
    o.corpus.path = defaultCorpus().string();
    spdlog::info("no --corpus: using {}", o.corpus.path);
  }
  pass::validateOptions(o);  // before the long part
  if (!o.resume.empty()) o.out = o.resume;
  // One rank of several (torchrun, srun, --dist-init): only rank 0 has an output directory.
  if (from_activations && runtime::detectLaunch(processEnv(), o.dist_init).distributed())
    throw InputError(option::kActivations, "is analysed by one process: start it without torchrun or srun (or give --dist-init none)");
  auto* ranks = from_activations ? nullptr
                                 : runtime::joinRanks(o.dist_init, std::chrono::seconds(o.dist_timeout_s), o.device);
  if (ranks && !ranks->root()) {
    pass::runAnalysis(o, runControl(o, nullptr), ranks);
    return {};
  }
  OutputDirectory output(o.out, !o.resume.empty() ? OutMode::kResume : o.force ? OutMode::kForce : OutMode::kNew);
  pass::AnalysisRun analysis;
  if (from_activations) {
    analysis.state = pass::analyzeActivations(o);
    anova::saveState(analysis.state, output.work() / kStateFile);
    analysis.report = pass::fitReportOptions(o.report, analysis.state.layers);
    if (analysis.report.screenot_k != o.report.screenot_k)
      spdlog::info("--screenot-k: {} (the default {} does not fit the hidden states' positions and width)",
                   analysis.report.screenot_k, o.report.screenot_k);
  } else {
    analysis = pass::runAnalysis(o, runControl(o, &output), ranks);
  }
  auto report = analysis.report;
  report.end_device = o.device;  // the end stage where the statistics were gathered
  auto computed = computeReport(analysis.state.settings, analysis.layers(), report, std::move(analysis.head_reports));
  const auto extras = neuronExtras(analysis);
  writeReportFiles(computed, output.work(), extras);
  output.commit();
  spdlog::info("report in {}", o.out.string());
  for (const auto& [key, value] : extras.summary.items()) computed.summary[key] = value;  // summary.json's object
  return computed;
}

}  // namespace posgeom::jobs
