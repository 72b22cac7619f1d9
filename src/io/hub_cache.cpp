#include "posgeom/io/hub_cache.h"

#include <algorithm>
#include <cstdlib>
#include <fstream>

#include "posgeom/base/error.h"

namespace posgeom::io {
namespace fs = std::filesystem;

EnvLookup processEnv() {
  return [](const char* key) -> std::optional<std::string> {
    const char* v = std::getenv(key);
    if (v == nullptr || *v == '\0') return std::nullopt;
    return std::string(v);
  };
}

fs::path hubCacheRoot(const EnvLookup& env) {
  if (auto v = env("HF_HUB_CACHE")) return *v;
  if (auto v = env("HF_HOME")) return fs::path(*v) / "hub";
  const auto home = env("HOME");
  return fs::path(home ? *home : ".") / ".cache" / "huggingface" / "hub";
}

namespace {
std::string repoFolderName(const std::string& name) {
  std::string folder = "models--";
  for (char c : name) folder += (c == '/') ? std::string("--") : std::string(1, c);
  return folder;
}

std::optional<fs::path> newestSnapshot(const fs::path& snapshots) {
  std::optional<fs::path> best;
  fs::file_time_type best_time{};
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(snapshots, ec)) {
    if (!entry.is_directory()) continue;
    const auto t = entry.last_write_time(ec);
    if (!best || t > best_time) {
      best = entry.path();
      best_time = t;
    }
  }
  return best;
}
}  // namespace

fs::path resolveModelDir(const std::string& name, const EnvLookup& env) {
  if (name.empty()) throw InputError("--model", "empty model name");
  if (fs::is_directory(name)) return fs::path(name);
  const fs::path root = hubCacheRoot(env);
  const fs::path repo = root / repoFolderName(name);
  const std::string how = "; download it first, e.g. `huggingface-cli download " + name +
                          "`, or pass the model's directory";
  if (name.front() == '/' || name.front() == '.' || name.rfind("~", 0) == 0 ||
      std::count(name.begin(), name.end(), '/') > 1)
    throw InputError(name, "model directory does not exist");
  if (!fs::is_directory(repo / "snapshots"))
    throw InputError(name, "not a directory, and not in the Hugging Face cache (looked in " + repo.string() + ")" + how);
  std::ifstream ref(repo / "refs" / "main");
  std::string rev;
  if (ref && std::getline(ref, rev) && !rev.empty() && fs::is_directory(repo / "snapshots" / rev))
    return repo / "snapshots" / rev;
  if (auto snap = newestSnapshot(repo / "snapshots")) return *snap;
  throw InputError(name, "the Hugging Face cache has no snapshot in " + (repo / "snapshots").string() + how);
}

}  // namespace posgeom::io
