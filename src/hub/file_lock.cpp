#include "posgeom/hub/file_lock.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "posgeom/base/error.h"

namespace posgeom::hub {

FileLock::FileLock(const std::filesystem::path& path, const std::function<void()>& on_wait) {
  std::error_code ec;
  std::filesystem::create_directories(path.parent_path(), ec);
  if (ec)
    throw InputError(path.parent_path().string(), "cannot be made (" + ec.message() +
                                                      "): a download needs a writable Hugging Face cache; point HF_HUB_CACHE at one");
  fd_ = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
  if (fd_ < 0) throw InputError(path.string(), std::string("cannot be opened as a lock: ") + std::strerror(errno));
  if (::flock(fd_, LOCK_EX | LOCK_NB) == 0) return;
  if (errno == EWOULDBLOCK && on_wait) on_wait();
  while (::flock(fd_, LOCK_EX) != 0) {
    if (errno == EINTR) continue;
    const int error = errno;
    ::close(fd_);
    if (error == ENOSYS || error == ENOLCK || error == EOPNOTSUPP)
      throw InputError(path.string(), "cannot be locked: its file system has no flock(2); point HF_HUB_CACHE at one that has (a local disk)");
    throw InputError(path.string(), std::string("cannot be locked: ") + std::strerror(error));
  }
}

FileLock::~FileLock() {
  if (fd_ >= 0) ::close(fd_);  // closing releases the flock; the file stays, as huggingface_hub leaves its own
}

}  // namespace posgeom::hub
