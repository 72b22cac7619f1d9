#include "posgeom/io/atomic_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <streambuf>
#include <vector>

#include "posgeom/base/error.h"

namespace posgeom::io {
namespace {

// A stream buffer over a file descriptor that keeps the first write error's errno,
// which std::ofstream loses: "No space left on device" is what the user needs to read.
class FileDescriptorBuffer final : public std::streambuf {
 public:
  explicit FileDescriptorBuffer(int fd) : fd_(fd), buffer_(1 << 16) { setp(buffer_.data(), buffer_.data() + buffer_.size()); }
  int error() const { return error_; }

  // Flushes and syncs to the disk; false (with error()) on failure.
  bool commit() {
    if (sync() != 0) return false;
    if (::fsync(fd_) != 0) error_ = errno;
    return error_ == 0;
  }

 protected:
  int_type overflow(int_type ch) override {
    if (sync() != 0) return traits_type::eof();
    if (!traits_type::eq_int_type(ch, traits_type::eof())) {
      *pptr() = traits_type::to_char_type(ch);
      pbump(1);
    }
    return traits_type::not_eof(ch);
  }

  int sync() override {
    const char* at = pbase();
    while (at < pptr() && error_ == 0) {
      const ssize_t n = ::write(fd_, at, static_cast<std::size_t>(pptr() - at));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) error_ = n < 0 ? errno : EIO;
      else at += n;
    }
    setp(buffer_.data(), buffer_.data() + buffer_.size());
    return error_ == 0 ? 0 : -1;
  }

 private:
  int fd_;
  std::vector<char> buffer_;
  int error_ = 0;
};

}  // namespace

void writeFileAtomically(const std::filesystem::path& path,
                         const std::function<void(std::ostream&)>& write) {
  namespace fs = std::filesystem;
  const fs::path tmp = path.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path.string(), std::string("cannot write: ") + std::strerror(errno));
  auto discard = [&] {
    ::close(fd);
    std::error_code ec;
    fs::remove(tmp, ec);
  };
  FileDescriptorBuffer buffer(fd);
  try {
    std::ostream out(&buffer);
    write(out);
  } catch (...) {
    discard();
    throw;
  }
  if (!buffer.commit()) {
    const int error = buffer.error();
    discard();
    throw InputError(path.string(), std::string("cannot write: ") + std::strerror(error));
  }
  if (::close(fd) != 0) {
    const int error = errno;
    std::error_code ec;
    fs::remove(tmp, ec);
    throw InputError(path.string(), std::string("cannot write: ") + std::strerror(error));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec) {
    fs::remove(tmp, ec);
    throw InputError(path.string(), "cannot write: " + ec.message());
  }
}

void writeTextFileAtomically(const std::filesystem::path& path, const std::string& text) {
  writeFileAtomically(path, [&](std::ostream& out) { out << text; });
}

}  // namespace posgeom::io
