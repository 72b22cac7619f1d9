#include "posgeom/jobs/merge_job.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "posgeom/anova/state_file.h"
#include "posgeom/base/error.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/output_directory.h"
#include "posgeom/jobs/report_writer.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/heads_stage.h"

namespace posgeom::jobs {

void runMergeJob(const MergeJob& job) {
  std::vector<anova::AnalysisState> loaded;
  for (const auto& p : job.states) loaded.push_back(anova::loadState(p));
  auto caps = job.caps;
  if (!loaded.empty() && loaded.front().settings.contains("head_options"))
    caps.attention_samples = loaded.front().settings["head_options"].value("samples", caps.attention_samples);
  const auto merged = anova::mergeStates(loaded, caps);
  std::vector<heads::HeadReport> head_reports;
  auto state = merged;
  if (merged.settings.contains("head_options")) {
    if (job.model.empty()) {
      spdlog::warn("the states hold attention inputs: give --model to analyse the heads");
    } else {
      const auto model = pass::loadPassModel(io::resolveModelDir(job.model, io::processEnv()), runtime::DeviceSpec{},
                                             runtime::ComputeDtype::kFloat32);
      const auto& type = pass::configOf(*model).model_type;
      if (type != merged.settings.value("model_type", ""))
        throw InputError(job.model, "is a " + type + " model; the states come from " +
                                        merged.settings.value("model_type", std::string("another")));
      heads::HeadOptions defaults;
      defaults.subspace_k = job.report.screenot_k;
      defaults.subspace_strategy = job.report.screenot_strategy;
      const auto start = std::chrono::steady_clock::now();
      head_reports = pass::analyzeHeads(*model, merged, pass::headOptionsFromSettings(merged.settings["head_options"], defaults),
                                        merged.settings.value("causal", true));
      state.settings["timings"]["heads_s"] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  const OutputDirectory output(job.out, job.force);
  anova::saveState(merged, job.out / kStateFile);
  writeReport(state, job.report, job.out, head_reports);
  spdlog::info("merged {} states ({} windows) into {}", job.states.size(), merged.windows, job.out.string());
}

}  // namespace posgeom::jobs
