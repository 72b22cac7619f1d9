#pragma once
// One posgeom run at a time writes a given output: an exclusive lock on
// .<name>.posgeom-lock beside it, holding the holder's pid for a second run's message.
// analyze's --out, train's --out, a batch sweep's out and forward's file all take it, so
// two runs on one output refuse instead of leaving one's files beside the other's.
#include <filesystem>
#include <string>
#include <vector>

namespace posgeom::io {

// `path` as one absolute name, however it was written ("r", "./r", "r/").
std::filesystem::path normalisedPath(const std::filesystem::path& path);
// A file beside `path` (normalised): .<name><suffix>.
std::filesystem::path besidePath(const std::filesystem::path& path, const std::string& suffix);

class PathLock {
 public:
  // InputError naming `path` as given when another posgeom run holds it, or when its
  // directory cannot hold the lock. `option` is what the message tells to choose again.
  explicit PathLock(const std::filesystem::path& path, const std::string& option = "--out");
  ~PathLock();
  PathLock(const PathLock&) = delete;
  PathLock& operator=(const PathLock&) = delete;
  // Unlocks and removes the lock file (also at destruction), and the directories made
  // for it where nothing else was put in them.
  void release();

 private:
  void removeMadeDirs();
  std::filesystem::path lock_path_;
  std::vector<std::filesystem::path> made_dirs_;  // deepest first
  int fd_ = -1;
};

}  // namespace posgeom::io
