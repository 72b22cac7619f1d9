#pragma once
// --out, so that it always holds one complete report: the old one until the new one is
// whole. A run writes everything (its saved state, then the report) into a work directory
// beside --out, .<name>.posgeom-work, and commit() swaps it in at the end in one step
// (renameat2 RENAME_EXCHANGE where the file system has it). A run killed at any point
// leaves --out as it was; what it left beside it is cleaned up by the next run on that
// --out, or kept for --resume when it holds a saved state.
//
// Beside --out too, for the run's lifetime: the lock (.<name>.posgeom-lock, with the
// holder's pid), so that a second run on the same --out refuses instead of silently
// replacing the first one's report.
#include <filesystem>
#include <memory>

#include "posgeom/io/path_lock.h"

namespace posgeom::jobs {

enum class OutMode {
  kNew,     // --out must be absent or empty
  kForce,   // an existing report is replaced whole
  kResume,  // continue the run whose state is in the work directory (or --out)
};

class OutputDirectory {
 public:
  OutputDirectory(const std::filesystem::path& out, OutMode mode);
  ~OutputDirectory();
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

  const std::filesystem::path& out() const { return out_; }
  // Where this run writes; it becomes --out at commit().
  const std::filesystem::path& work() const { return work_; }
  // With kResume: the state to resume (the work directory's, else a finished run's in
  // --out). InputError naming --out when neither holds one.
  std::filesystem::path resumeState() const;
  // The work directory becomes --out; the old report, if any, is removed.
  void commit();

 private:
  void recoverLeftovers(OutMode mode);
  void release();
  std::filesystem::path out_, work_, old_;
  std::unique_ptr<io::PathLock> lock_;
  bool committed_ = false;
};

// The files a report consists of (summary.json, report.html, state.safetensors, *.csv,
// kernels_B*.safetensors, and batch's check.txt):
// --force replaces a directory of only these, never one with anything else in it.
bool isReportFile(const std::filesystem::path& name);

}  // namespace posgeom::jobs
