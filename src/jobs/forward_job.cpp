#include "posgeom/jobs/forward_job.h"

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/io/checkpoint.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/output_file.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

std::vector<fs::path> modelInputFiles(const fs::path& dir) {
  std::vector<fs::path> files = {dir / "config.json", dir / "model.safetensors", dir / "pytorch_model.bin"};
  for (const char* index : {"model.safetensors.index.json", "pytorch_model.bin.index.json"}) {
    if (!fs::exists(dir / index)) continue;
    files.push_back(dir / index);
    try {
      for (const auto& [file, tensors] : io::readShardIndex(dir / index)) files.push_back(dir / file);
    } catch (const InputError&) {
      // Loading the model names what is wrong with the index.
    }
  }
  return files;
}

void runForwardJob(const ForwardJob& job) {
  auto request = job.request;
  request.model_dir = io::resolveModelDir(job.model, io::processEnv(), job.revision);
  auto inputs = modelInputFiles(request.model_dir);
  if (!request.ids_path.empty()) inputs.push_back(request.ids_path);
  // Checked (and locked) before the model loads: a refusal costs nothing.
  io::OutputFile out(request.out_path, {"--out", job.force, inputs});
  io::SafetensorsWriter writer;
  const auto what = model::collectHiddenStates(request, writer);
  out.writeWith([&](const fs::path& path) { writer.write(path); });
  log::info("wrote " + what + " to " + request.out_path.string());
}

}  // namespace posgeom::jobs
