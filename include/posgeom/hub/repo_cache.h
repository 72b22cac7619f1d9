#pragma once
// One repository's place in the Hugging Face cache, laid out as huggingface_hub lays it
// out so that transformers and posgeom share one copy both ways:
//   <cache>/models--org--name/blobs/<etag>              the bytes, named by their ETag
//   <cache>/models--org--name/blobs/<etag>.incomplete   a download in progress (resumed)
//   <cache>/models--org--name/snapshots/<commit>/<path> a relative link to its blob
//   <cache>/models--org--name/refs/<revision>           the commit a branch or tag named
//   <cache>/.locks/models--org--name/<etag>.lock        flock(2)ed while a blob is written
#include <filesystem>
#include <string>

namespace posgeom::hub {

class RepoCache {
 public:
  RepoCache(std::filesystem::path cache, const std::string& name);
  std::filesystem::path blob(const std::string& etag) const;
  std::filesystem::path incompleteBlob(const std::string& etag) const;
  std::filesystem::path snapshot(const std::string& commit) const;
  std::filesystem::path pointer(const std::string& commit, const std::string& path) const;
  std::filesystem::path blobLock(const std::string& etag) const;
  // posgeom's own lock on the whole repository: one process downloads, the others wait.
  std::filesystem::path repoLock() const;
  const std::filesystem::path& repo() const { return repo_; }

  // snapshots/<commit>/<path> -> ../../blobs/<etag> (relative, as huggingface_hub makes
  // them), replacing a link that was there; made under a temporary name and renamed, so
  // a reader sees the old link or the new one.
  void link(const std::string& commit, const std::string& path, const std::string& etag) const;
  // refs/<revision> holding the commit, written whole (a revision that is the commit
  // itself has no ref, as huggingface_hub does).
  void writeRef(const std::string& revision, const std::string& commit) const;

 private:
  std::filesystem::path cache_, repo_;
  std::string folder_;
};

}  // namespace posgeom::hub
