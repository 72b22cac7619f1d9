#pragma once
// --out: refuses to mix a new report with an old one's files unless asked to, and holds a
// lock (.<name>.posgeom-lock beside it, with the holder's pid) so that a second run on the
// same --out refuses instead of silently replacing the first one's report. A directory
// this run creates is removed again if the run fails before writing into it.
#include <filesystem>

namespace posgeom::jobs {

class OutputDirectory {
 public:
  OutputDirectory(const std::filesystem::path& out, bool force);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

 private:
  void release();
  std::filesystem::path out_;
  std::filesystem::path lock_path_;
  int lock_fd_ = -1;
  bool created_ = false;
};

}  // namespace posgeom::jobs
