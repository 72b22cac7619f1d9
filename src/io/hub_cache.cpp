#include "posgeom/io/hub_cache.h"

#include <algorithm>
#include <cctype>
#include <fstream>
#include <vector>

#include "posgeom/base/error.h"

namespace posgeom::io {
namespace fs = std::filesystem;

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

std::string snapshotCommit(const fs::path& dir) {
  auto clean = dir.lexically_normal();
  if (!clean.has_filename()) clean = clean.parent_path();  // a trailing slash
  return clean.parent_path().filename() == "snapshots" ? clean.filename().string() : "";
}

namespace {

// `revision` of the cached repo: a ref (branch, tag), a snapshot's commit or its unique prefix.
fs::path snapshotAt(const fs::path& repo, const std::string& name, const std::string& revision) {
  std::ifstream ref(repo / "refs" / revision);
  std::string commit;
  if (revision.find("..") == std::string::npos && ref && std::getline(ref, commit) && !commit.empty() &&
      fs::is_directory(repo / "snapshots" / commit))
    return repo / "snapshots" / commit;
  std::vector<std::string> matches;
  std::error_code ec;
  const bool hex = revision.size() >= 7 && std::all_of(revision.begin(), revision.end(), [](char c) { return std::isxdigit(static_cast<unsigned char>(c)); });
  for (const auto& entry : fs::directory_iterator(repo / "snapshots", ec)) {
    const auto snapshot = entry.path().filename().string();
    if (snapshot == revision || (hex && snapshot.rfind(revision, 0) == 0)) matches.push_back(snapshot);
  }
  if (matches.size() == 1) return repo / "snapshots" / matches[0];
  std::vector<std::string> names;
  for (const auto& entry : fs::recursive_directory_iterator(repo / "refs", ec))
    if (entry.is_regular_file()) names.push_back(fs::relative(entry.path(), repo / "refs").string());
  std::sort(names.begin(), names.end());
  std::string refs;
  for (const auto& n : names) refs += (refs.empty() ? "" : ", ") + n;
  throw InputError("--revision", "'" + revision + "' is " + (matches.size() > 1 ? "a prefix of several commits" : "not a branch, tag or commit") +
                                     " of " + name + " in the Hugging Face cache (refs there: " + (refs.empty() ? "none" : refs) +
                                     "); download it first, e.g. `huggingface-cli download " + name + " --revision " + revision + "`");
}

}  // namespace

fs::path resolveModelDir(const std::string& name, const EnvLookup& env, const std::string& revision) {
  if (name.empty()) throw InputError("--model", "empty model name");
  if (fs::is_directory(name)) {
    if (!revision.empty()) throw InputError("--revision", "applies to a hub name, not to the directory '" + name + "'");
    return fs::path(name);
  }
  const fs::path root = hubCacheRoot(env);
  const fs::path repo = root / repoFolderName(name);
  const std::string how = "; download it first, e.g. `huggingface-cli download " + name +
                          "`, or pass the model's directory";
  if (name.front() == '/' || name.front() == '.' || name.rfind("~", 0) == 0 ||
      std::count(name.begin(), name.end(), '/') > 1)
    throw InputError(name, "model directory does not exist");
  if (!fs::is_directory(repo / "snapshots"))
    throw InputError(name, "not a directory, and not in the Hugging Face cache (looked in " + repo.string() + ")" + how);
  if (!revision.empty()) return snapshotAt(repo, name, revision);
  std::ifstream ref(repo / "refs" / "main");
  std::string rev;
  if (ref && std::getline(ref, rev) && !rev.empty() && fs::is_directory(repo / "snapshots" / rev))
    return repo / "snapshots" / rev;
  if (auto snap = newestSnapshot(repo / "snapshots")) return *snap;
  throw InputError(name, "the Hugging Face cache has no snapshot in " + (repo / "snapshots").string() + how);
}

}  // namespace posgeom::io
