#include "posgeom/hub/model_source.h"

#include <spdlog/spdlog.h>

#include "posgeom/base/error.h"
#include "posgeom/hub/file_lock.h"
#include "posgeom/hub/hub_api.h"
#include "posgeom/hub/repo_cache.h"
#include "posgeom/hub/snapshot_download.h"
#include "posgeom/io/hub_cache.h"

namespace posgeom::hub {
namespace fs = std::filesystem;
namespace {

bool shardsPresent(const fs::path& dir, const std::string& index) {
  try {
    for (const auto& shard : indexShards(dir / index))
      if (!fs::exists(dir / shard)) return false;
    return true;
  } catch (const InputError&) {
    return true;  // a damaged index is the loader's to name, not a reason to download
  }
}

// The cached snapshot when it holds `parts` (or, `offline`, when it is there at all: its
// reader then names what it lacks); empty with `why` said otherwise.
fs::path cachedSnapshot(const std::string& name, const std::string& revision, ModelParts parts, const EnvLookup& env,
                        bool offline, std::string& why) {
  try {
    const auto dir = io::resolveModelDir(name, env, revision);
    if (offline || holdsParts(dir, parts)) return dir;
    why = name + ": the Hugging Face cache's snapshot " + dir.string() + " lacks " +
          (parts == ModelParts::kWeights ? "the config or weights" : parts == ModelParts::kConfig ? "the config" : "a tokenizer");
  } catch (const io::NotCached& e) {
    why = e.what();
  }
  return {};
}

}  // namespace

bool holdsParts(const fs::path& dir, ModelParts parts) {
  if (parts == ModelParts::kTokenizer)  // a tokenizer-only repository has no config
    return fs::exists(dir / "tokenizer.json") || fs::exists(dir / "vocab.json") || fs::exists(dir / "vocab.txt") ||
           fs::exists(dir / "tokenizer.model");
  if (!fs::exists(dir / "config.json")) return false;
  if (parts == ModelParts::kConfig) return true;
  if (fs::exists(dir / "model.safetensors")) return true;
  if (fs::exists(dir / "model.safetensors.index.json")) return shardsPresent(dir, "model.safetensors.index.json");
  if (fs::exists(dir / "pytorch_model.bin")) return true;
  return fs::exists(dir / "pytorch_model.bin.index.json") && shardsPresent(dir, "pytorch_model.bin.index.json");
}

fs::path modelDirectory(const std::string& name, const std::string& revision, ModelParts parts, const EnvLookup& env) {
  if (name.empty() || fs::is_directory(name) || !isHubName(name)) return io::resolveModelDir(name, env, revision);
  std::string why;
  // Only the offline switch is read before the cache: a setting the download would refuse
  // (an unreadable token file, a bad HF_ENDPOINT) never stands in the way of a cached model.
  const bool offline = offlineMode(env);
  if (auto dir = cachedSnapshot(name, revision, parts, env, offline, why); !dir.empty()) {
    if (offline && parts == ModelParts::kWeights && !holdsParts(dir, parts))
      throw InputError(name, "the Hugging Face cache's snapshot " + dir.string() +
                                 " lacks weights (only its config was downloaded, or its download was cut); HF_HUB_OFFLINE is set, so "
                                 "nothing is downloaded: unset it, or run `posgeom download " + name + "` where the hub can be reached");
    return dir;
  }
  if (offline)
    throw InputError("", why.substr(0, std::min(why.find("; download it"), why.find(", or download it"))) +
                               "; HF_HUB_OFFLINE is set, so nothing is downloaded: unset it, or run `posgeom download " + name +
                               (revision.empty() ? "" : " --revision " + revision) + "` where the hub can be reached");
  const auto settings = hubSettings(env);
  const RepoCache cache(settings.cache, name);
  FileLock lock(cache.repoLock(), [&] { spdlog::info("{}: another posgeom process is downloading it; waiting for it", name); });
  if (auto dir = cachedSnapshot(name, revision, parts, env, false, why); !dir.empty()) return dir;  // the other process got it
  spdlog::info("{}; downloading it", why.substr(0, why.find(';')));
  SnapshotRequest request;
  request.name = name;
  request.revision = revision;
  request.parts = parts;
  request.write_ref = parts != ModelParts::kConfig;  // withWeights names the snapshot once its weights are there
  return downloadSnapshot(settings, request);
}

fs::path withWeights(const std::string& name, const std::string& revision, const fs::path& dir, const EnvLookup& env) {
  const auto commit = io::snapshotCommit(dir);
  if (commit.empty() || !isHubName(name) || fs::is_directory(name)) return dir;  // a directory's loader says what it lacks
  if (!holdsParts(dir, ModelParts::kWeights)) modelDirectory(name, commit, ModelParts::kWeights, env);  // the same commit, even where the branch moved
  // The revision's ref, left unwritten by the config's download, now that the snapshot is whole
  // (never moved where another process set it since).
  const std::string ref = revision.empty() ? "main" : revision;
  const RepoCache cache(io::hubCacheRoot(env), name);
  std::error_code ec;
  if (ref != commit && isSafeRepoPath(ref) && !fs::exists(cache.repo() / "refs" / ref, ec) && !offlineMode(env)) cache.writeRef(ref, commit);
  return dir;
}

}  // namespace posgeom::hub
