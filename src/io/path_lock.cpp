#include "posgeom/io/path_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "posgeom/base/error.h"
#include "posgeom/io/path_entry.h"

namespace posgeom::io {
namespace fs = std::filesystem;

namespace {

std::string holderOf(int fd) {
  char buffer[32] = {};
  const auto n = pread(fd, buffer, sizeof(buffer) - 1, 0);
  std::string pid = n > 0 ? std::string(buffer, static_cast<std::size_t>(n)) : "";
  while (!pid.empty() && (pid.back() == '\n' || pid.back() == ' ')) pid.pop_back();
  return pid.empty() ? "unknown" : pid;
}

}  // namespace

fs::path normalisedPath(const fs::path& path) {
  auto p = fs::absolute(path).lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  return p;
}

fs::path besidePath(const fs::path& path, const std::string& suffix) {
  const auto p = normalisedPath(path);
  return p.parent_path() / ("." + p.filename().string() + suffix);
}

namespace {

// `path` with its links resolved as far as it exists: one output reached by two names
// (a link to a run's directory) is one lock.
fs::path resolved(const fs::path& path) {
  std::error_code ec;
  const auto real = fs::weakly_canonical(fs::absolute(path, ec), ec);
  return ec || real.empty() ? path : real;
}

}  // namespace

PathLock::PathLock(const fs::path& path, const std::string& option) : lock_path_(besidePath(resolved(path), ".posgeom-lock")) {
  std::error_code ec;
  // The directories made for the lock go again with it when nothing else was put in them.
  for (auto dir = lock_path_.parent_path(); !dir.empty() && !entryExists(dir); dir = dir.parent_path()) {
    made_dirs_.push_back(dir);
    if (dir == dir.parent_path()) break;
  }
  fs::create_directories(lock_path_.parent_path(), ec);
  // The holder unlinks the file on release, so a lock is taken on the file the path names
  // now (the loop), never on one already unlinked.
  for (;;) {
    fd_ = ::open(lock_path_.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      const int error = errno;
      removeMadeDirs();
      throw InputError(path.string(), std::string("is not writable: cannot create its lock ") + lock_path_.string() + ": " +
                                          std::strerror(error));
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const std::string holder = holderOf(fd_);
      ::close(fd_);
      fd_ = -1;
      removeMadeDirs();
      throw InputError(path.string(), "is being written by another posgeom run (pid " + holder +
                                          "); wait for it to finish or choose another " + option);
    }
    struct stat held {}, named {};
    if (::fstat(fd_, &held) == 0 && ::stat(lock_path_.c_str(), &named) == 0 && held.st_ino == named.st_ino) break;
    ::close(fd_);
  }
  const std::string pid = std::to_string(::getpid()) + "\n";
  if (::ftruncate(fd_, 0) != 0 || ::pwrite(fd_, pid.data(), pid.size(), 0) < 0) {
    // The pid is only for the message of a second run: the lock holds without it.
  }
}

void PathLock::release() {
  if (fd_ < 0) return;
  ::unlink(lock_path_.c_str());
  ::close(fd_);
  fd_ = -1;
  removeMadeDirs();
}

void PathLock::removeMadeDirs() {
  std::error_code ec;
  for (const auto& dir : made_dirs_) fs::remove(dir, ec);  // deepest first; only while empty
  made_dirs_.clear();
}

PathLock::~PathLock() { release(); }

}  // namespace posgeom::io
