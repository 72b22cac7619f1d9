#include "posgeom/jobs/download_job.h"

#include <spdlog/spdlog.h>

#include "posgeom/base/environment.h"
#include "posgeom/base/error.h"
#include "posgeom/hub/file_lock.h"
#include "posgeom/hub/hub_api.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/hub/repo_cache.h"
#include "posgeom/hub/snapshot_download.h"

namespace posgeom::jobs {

std::filesystem::path runDownloadJob(const DownloadJob& job) {
  if (!hub::isHubName(job.model))
    throw InputError("download", "'" + job.model.substr(0, 64) + "' is not a hub name (org/name of letters, digits, '-', '_', '.')");
  const auto env = processEnv();
  const auto settings = hub::hubSettings(env);
  if (settings.offline) {
    if (!job.include.empty()) throw InputError("--include", "needs the hub's file list, and HF_HUB_OFFLINE is set");
    return hub::modelDirectory(job.model, job.revision, hub::ModelParts::kWeights, env);
  }
  hub::FileLock lock(hub::RepoCache(settings.cache, job.model).repoLock(),
                     [&] { spdlog::info("{}: another posgeom process is downloading it; waiting for it", job.model); });
  hub::SnapshotRequest request;
  request.name = job.model;
  request.revision = job.revision;
  request.include = job.include;
  return hub::downloadSnapshot(settings, request);
}

}  // namespace posgeom::jobs
