#include "posgeom/jobs/forward_job.h"

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/output_file.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

void runForwardJob(const ForwardJob& job) {
  auto request = job.request;
  request.model_dir = hub::modelDirectory(job.model, job.revision, hub::ModelParts::kConfig, io::processEnv());
  // The model's whole directory (weights, shards, tokenizer, configs) and the ids.
  std::vector<fs::path> inputs{request.model_dir};
  if (!request.ids_path.empty()) inputs.push_back(request.ids_path);
  // Checked (and locked) before the weights are downloaded or loaded: a refusal costs nothing.
  io::OutputFile out(request.out_path, {option::kOut, job.force, inputs});
  hub::withWeights(job.model, job.revision, request.model_dir, io::processEnv());
  io::SafetensorsWriter writer;
  const auto what = model::collectHiddenStates(request, writer);
  out.writeWith([&](const fs::path& path) { writer.write(path); });
  log::info("wrote " + what + " to " + request.out_path.string());
}

}  // namespace posgeom::jobs
