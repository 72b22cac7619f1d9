#pragma once
// A directory of its own under the system's temporary directory ($TMPDIR), removed with
// everything in it when the object goes: bench's checkpoints without --work-dir, and the
// Python package's analyze() without out=.
#include <filesystem>
#include <string>

namespace posgeom::io {

class TemporaryDirectory {
 public:
  // posgeom-<purpose>-XXXXXX; InputError naming the pattern when it cannot be made.
  explicit TemporaryDirectory(const std::string& purpose);
  ~TemporaryDirectory();
  TemporaryDirectory(const TemporaryDirectory&) = delete;
  TemporaryDirectory& operator=(const TemporaryDirectory&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

}  // namespace posgeom::io
