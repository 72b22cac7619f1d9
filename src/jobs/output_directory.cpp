#include "posgeom/jobs/output_directory.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string>

#include "posgeom/base/error.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;

namespace {

// The lock beside the directory, not inside it: a report holds only the report.
fs::path lockPathOf(const fs::path& out) {
  auto dir = fs::absolute(out).lexically_normal();
  if (!dir.has_filename()) dir = dir.parent_path();
  return dir.parent_path() / ("." + dir.filename().string() + ".posgeom-lock");
}

std::string holderOf(int fd) {
  char buffer[32] = {};
  const auto n = pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string pid = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

OutputDirectory::OutputDirectory(const fs::path& out, bool force) : out_(out), lock_path_(lockPathOf(out)) {
  std::error_code ec;
  fs::create_directories(lock_path_.parent_path(), ec);
  // Held for the whole run; the holder unlinks the file on release, so a lock is taken on
  // the file the path names now (the loop), never on one already unlinked.
  for (;;) {
    lock_fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (lock_fd_ < 0)
      throw InputError(out.string(), std::string("is not writable: cannot create its lock ") + lock_path_.string() + ": " +
                                         std::strerror(errno));
    if (::flock(lock_fd_, LOCK_EX | LOCK_NB) != 0) {
      const std::string holder = holderOf(lock_fd_);
      ::close(lock_fd_);
      lock_fd_ = -1;
      throw InputError(out.string(), "is being written by another posgeom run (pid " + holder +
                                         "); wait for it to finish or choose another --out");
    }
    struct stat held {}, named {};
    if (::fstat(lock_fd_, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 && held.st_ino == named.st_ino) break;
    ::close(lock_fd_);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(lock_fd_, 0) != 0 || ::pwrite(lock_fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message of a second run: the lock holds without it.
  }
  if (!force && fs::is_directory(out, ec) && !fs::is_empty(out, ec)) {
    release();
    throw InputError(out.string(), "exists and is not empty; pass --force to write into it");
  }
  created_ = fs::create_directories(out, ec);
  if (ec) {
    release();
    throw InputError(out.string(), "cannot create the output directory: " + ec.message());
  }
  // Found now, not after the whole pass: a directory the run cannot write into.
  const auto probe = out / (".posgeom-write-test." + std::to_string(::getpid()));
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) {
    const std::string why = std::strerror(errno);
    if (created_) fs::remove(out, ec);
    created_ = false;
    release();
    throw InputError(out.string(), "is not writable: " + why);
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

void OutputDirectory::release() {
  if (lock_fd_ < 0) return;
  ::unlink(lock_path_.c_str());
  ::close(lock_fd_);
  lock_fd_ = -1;
}

OutputDirectory::~OutputDirectory() {
  std::error_code ec;
  if (created_ && fs::is_empty(out_, ec)) fs::remove(out_, ec);
  release();
}

}  // namespace posgeom::jobs
