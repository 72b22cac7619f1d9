#include "posgeom/hub/repo_cache.h"

#include <unistd.h>

#include <atomic>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/hub_cache.h"

namespace posgeom::hub {
namespace fs = std::filesystem;

RepoCache::RepoCache(fs::path cache, const std::string& name)
    : cache_(std::move(cache)), repo_(cache_ / io::hubRepoFolder(name)), folder_(io::hubRepoFolder(name)) {}

fs::path RepoCache::blob(const std::string& etag) const { return repo_ / "blobs" / etag; }
fs::path RepoCache::incompleteBlob(const std::string& etag) const { return repo_ / "blobs" / (etag + ".incomplete"); }
fs::path RepoCache::snapshot(const std::string& commit) const { return repo_ / "snapshots" / commit; }
fs::path RepoCache::pointer(const std::string& commit, const std::string& path) const { return snapshot(commit) / path; }
fs::path RepoCache::blobLock(const std::string& etag) const { return cache_ / ".locks" / folder_ / (etag + ".lock"); }
fs::path RepoCache::repoLock() const { return cache_ / ".locks" / folder_ / "posgeom-download.lock"; }

void RepoCache::link(const std::string& commit, const std::string& path, const std::string& etag) const {
  const fs::path at = pointer(commit, path);
  fs::create_directories(at.parent_path());
  // Lexical, as huggingface_hub's os.path.relpath: a blobs/ that is itself a link stays unresolved.
  const fs::path target = blob(etag).lexically_relative(at.parent_path());
  static std::atomic<unsigned> made{0};
  const fs::path temporary = at.parent_path() / ("." + at.filename().string() + ".posgeom-link." + std::to_string(::getpid()) + "." +
                                                 std::to_string(made++));
  std::error_code ec;
  fs::remove(temporary, ec);
  fs::create_symlink(target, temporary, ec);
  if (!ec) fs::rename(temporary, at, ec);
  if (ec) {
    fs::remove(temporary);
    throw InputError(at.string(), "cannot be linked to its blob: " + ec.message());
  }
}

void RepoCache::writeRef(const std::string& revision, const std::string& commit) const {
  if (revision == commit) return;
  const fs::path ref = repo_ / "refs" / revision;
  fs::create_directories(ref.parent_path());
  io::writeTextFileAtomically(ref, commit);
}

}  // namespace posgeom::hub
