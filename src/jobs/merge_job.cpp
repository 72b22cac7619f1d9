#include "posgeom/jobs/merge_job.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "posgeom/anova/state_file.h"
#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/output_directory.h"
#include "posgeom/jobs/report_writer.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/heads_stage.h"
#include "posgeom/pass/plan.h"

namespace posgeom::jobs {

void runMergeJob(const MergeJob& job) {
  std::vector<anova::NamedState> loaded;
  for (const auto& p : job.states) loaded.push_back({p.string(), anova::loadState(p)});
  auto caps = job.caps;
  if (!loaded.empty() && loaded.front().state.settings.contains("head_options"))
    caps.attention_samples = loaded.front().state.settings["head_options"].value("samples", caps.attention_samples);
  const auto merged = anova::mergeStates(loaded, caps, job.partial);
  // The default ScreeNOT bound cut to the states' windows and width, as analyze cuts it.
  const auto report = pass::fitReportOptions(job.report, merged.layers);
  if (merged.settings["data"].value("partial", false))
    spdlog::warn("a partial merge: shards {}/{} of the split, {} missing; the report says so (data.partial)",
                 merged.settings["coverage"]["shards"].dump(), merged.settings["coverage"]["shard_count"].get<int64_t>(),
                 merged.settings["coverage"]["missing"].dump());
  std::vector<heads::HeadReport> head_reports;
  auto state = merged;
  if (merged.settings.contains("head_options")) {
    if (job.model.empty()) {
      spdlog::warn("the states hold attention inputs: give --model to analyse the heads");
    } else {
      const auto model_dir = hub::modelDirectory(job.model, "", hub::ModelParts::kWeights, io::processEnv());
      // Only each block's query and key maps are read, one block at a time: streamed.
      const auto model = pass::loadPassModel(model_dir, runtime::DeviceSpec{}, runtime::ComputeDtype::kFloat32,
                                             /*stream_blocks=*/true);
      const auto& type = pass::configOf(*model).model_type;
      if (type != merged.settings.value("model_type", ""))
        throw InputError(job.model, "is a " + type + " model; the states come from " +
                                        merged.settings.value("model_type", std::string("another")));
      if (merged.settings.contains("model_fingerprint") &&
          merged.settings["model_fingerprint"] != io::modelFingerprint(model_dir))
        throw InputError(job.model, "is not the states' model (its config or weights differ from " +
                                        merged.settings.value("model", std::string("theirs")) + ")");
      heads::HeadOptions defaults;
      defaults.subspace_k = report.screenot_k;
      defaults.subspace_strategy = report.screenot_strategy;
      const auto start = std::chrono::steady_clock::now();
      head_reports = pass::analyzeHeads(*model, merged, pass::headOptionsFromSettings(merged.settings["head_options"], defaults),
                                        merged.settings.value("causal", true));
      state.settings["timings"]["heads_s"] =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  OutputDirectory output(job.out, job.force ? OutMode::kForce : OutMode::kNew);
  anova::saveState(merged, output.work() / kStateFile);
  writeReport(state, report, output.work(), head_reports);
  output.commit();
  spdlog::info("merged {} states ({} windows) into {}", job.states.size(), merged.windows, job.out.string());
}

}  // namespace posgeom::jobs
