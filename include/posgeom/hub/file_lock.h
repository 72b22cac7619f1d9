#pragma once
// An advisory lock held for as long as the object lives: flock(2) on a file, the kind
// huggingface_hub's filelock takes on the same .locks/ files, so posgeom, transformers and
// other posgeom processes (ranks on one node) write each blob once. Waits for the holder,
// saying so once.
#include <filesystem>
#include <functional>

namespace posgeom::hub {

class FileLock {
 public:
  // `on_wait` is called once when another process holds the lock, before waiting for it.
  FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait = {});
  ~FileLock();
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;

 private:
  int fd_ = -1;
};

}  // namespace posgeom::hub
