#pragma once
// --out: refuses to mix a new report with an old one's files unless asked to. A directory
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
  std::filesystem::path out_;
  bool created_ = false;
};

}  // namespace posgeom::jobs
