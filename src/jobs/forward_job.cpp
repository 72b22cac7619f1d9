#include "posgeom/jobs/forward_job.h"

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/output_file.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

void runForwardJob(const ForwardJob& job) {
  auto request = job.request;
  request.model_dir = io::resolveModelDir(job.model, io::processEnv(), job.revision);
  // The model's whole directory (weights, shards, tokenizer, configs) and the ids.
  std::vector<fs::path> inputs{request.model_dir};
  if (!request.ids_path.empty()) inputs.push_back(request.ids_path);
  // Checked (and locked) before the model loads: a refusal costs nothing.
  io::OutputFile out(request.out_path, {option::kOut, job.force, inputs});
  io::SafetensorsWriter writer;
  const auto what = model::collectHiddenStates(request, writer);
  out.writeWith([&](const fs::path& path) { writer.write(path); });
  log::info("wrote " + what + " to " + request.out_path.string());
}

}  // namespace posgeom::jobs
