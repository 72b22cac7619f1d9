#include "posgeom/jobs/output_directory.h"

#include <fcntl.h>
#include <spdlog/spdlog.h>
#include <stdio.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "posgeom/base/error.h"
#include "posgeom/io/path_lock.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

namespace {

constexpr const char* kStateName = "state.safetensors";

void removeAll(const fs::path& p) {
  std::error_code ec;
  fs::remove_all(p, ec);
}

// The first entry of `dir` that is not a report's file ("" when none).
std::string foreignEntry(const fs::path& dir) {
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec))
    if (!e.is_regular_file() || !isReportFile(e.path().filename())) return e.path().filename().string();
  return "";
}

}  // namespace

bool isReportFile(const fs::path& name) {
  const auto n = name.filename().string();
  // check.txt: what `batch` writes beside a run's report
  return n == "summary.json" || n == "report.html" || n == kStateName || n == "check.txt" || name.extension() == ".csv" ||
         (n.rfind("kernels_B", 0) == 0 && name.extension() == ".safetensors");
}

OutputDirectory::OutputDirectory(const fs::path& out, OutMode mode)
    : out_(out), work_(io::besidePath(out, ".posgeom-work")), old_(io::besidePath(out, ".posgeom-old")),
      lock_(std::make_unique<io::PathLock>(out)) {
  std::error_code ec;
  try {
    recoverLeftovers(mode);
    if (fs::exists(out_) && !fs::is_directory(out_)) throw InputError(out_.string(), "exists and is not a directory");
    if (fs::is_directory(out_) && !fs::is_empty(out_)) {
      if (mode == OutMode::kNew) throw InputError(out_.string(), "exists and is not empty; pass --force to replace it");
      if (const auto entry = foreignEntry(out_); !entry.empty())
        throw InputError(out_.string(), "holds '" + entry +
                                            "', which is not a posgeom report's file; --force replaces a report whole, "
                                            "so move it or choose another --out");
    }
    fs::create_directories(work_, ec);
    if (ec) throw InputError(out_.string(), "cannot create the output directory " + work_.string() + ": " + ec.message());
    // Found now, not after the whole pass: a directory the run cannot write into.
    const auto probe = work_ / (".posgeom-write-test." + std::to_string(::getpid()));
    const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw InputError(out_.string(), std::string("is not writable: ") + std::strerror(errno));
    ::close(fd);
    ::unlink(probe.c_str());
  } catch (...) {
    if (!fs::exists(work_ / kStateName, ec)) removeAll(work_);
    release();
    throw;
  }
}

// What a killed run left beside --out, found while holding the lock.
void OutputDirectory::recoverLeftovers(OutMode mode) {
  std::error_code ec;
  // Killed between the two renames of a swap without RENAME_EXCHANGE: the old report
  // goes back where it was.
  if (fs::exists(old_, ec)) {
    if (!fs::exists(out_, ec)) fs::rename(old_, out_, ec);
    removeAll(old_);
  }
  if (!fs::exists(work_, ec)) return;
  if (mode == OutMode::kResume) {
    // Keep the saved state; the rest (torn report files, *.tmp.<pid>) is rewritten.
    for (const auto& e : fs::directory_iterator(work_, ec))
      if (e.path().filename() != kStateName) removeAll(e.path());
    return;
  }
  if (fs::exists(work_ / kStateName, ec) && mode == OutMode::kNew)
    throw InputError(out_.string(), "an interrupted run left its saved state in " + work_.string() + ": --resume " +
                                        out_.string() + " continues it, --force starts over");
  spdlog::info("removing what an interrupted run left in {}", work_.string());
  removeAll(work_);
}

fs::path OutputDirectory::resumeState() const {
  if (fs::exists(work_ / kStateName)) return work_ / kStateName;
  if (fs::exists(out_ / kStateName)) return out_ / kStateName;
  throw InputError(out_.string(), std::string("holds no ") + kStateName + " to resume from");
}

void OutputDirectory::commit() {
  std::error_code ec;
  if (!fs::exists(out_, ec)) {
    fs::create_directories(io::normalisedPath(out_).parent_path(), ec);
    if (::rename(work_.c_str(), out_.c_str()) != 0)
      throw InputError(out_.string(), std::string("cannot move the report in from ") + work_.string() + ": " +
                                          std::strerror(errno));
  } else if (::renameat2(AT_FDCWD, work_.c_str(), AT_FDCWD, out_.c_str(), RENAME_EXCHANGE) == 0) {
    removeAll(work_);  // now the old report
  } else {
    // No atomic exchange here (NFS, older kernels): two renames, undone by the next run
    // (recoverLeftovers) if this one dies between them.
    if (::rename(out_.c_str(), old_.c_str()) != 0 || ::rename(work_.c_str(), out_.c_str()) != 0)
      throw InputError(out_.string(), std::string("cannot swap the new report in: ") + std::strerror(errno));
    removeAll(old_);
  }
  committed_ = true;
}

void OutputDirectory::release() { lock_->release(); }

OutputDirectory::~OutputDirectory() {
  // Not committed: a saved state stays for --resume (with nothing else beside it); without
  // one there is nothing to keep.
  std::error_code ec;
  if (!committed_ && fs::exists(work_, ec)) {
    if (fs::exists(work_ / kStateName, ec)) {
      for (const auto& e : fs::directory_iterator(work_, ec))
        if (e.path().filename() != kStateName) removeAll(e.path());
    } else {
      removeAll(work_);
    }
  }
  release();
}

}  // namespace posgeom::jobs
