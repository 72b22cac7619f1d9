#include "posgeom/corpus/byte_source.h"

#include <fcntl.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <vector>

#include "posgeom/base/error.h"
#include "posgeom/base/stop_signals.h"

namespace posgeom::corpus {
namespace {

class FdSource final : public ByteSource {
 public:
  FdSource(int fd, std::string name, bool owned) : fd_(fd), name_(std::move(name)), owned_(owned) {
    struct stat st {};
    stream_ = ::fstat(fd_, &st) == 0 && !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode);
  }
  ~FdSource() override {
    if (owned_) ::close(fd_);
  }
  std::size_t read(char* buf, std::size_t n) override {
    for (;;) {
      // A pipe, a FIFO or a terminal may give nothing for as long as its writer likes:
      // waited on in slices, so that a stop signal (SIGINT, SIGTERM) ends the wait.
      if (stream_) {
        pollfd ready{fd_, POLLIN, 0};
        const int r = ::poll(&ready, 1, kWaitSliceMs);
        if (const int signal = stopSignalReceived())
          throw RunStopped(std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " while waiting for " + name_ +
                               " to give more data",
                           128 + signal);
        if (r == 0 || (r < 0 && errno == EINTR)) continue;
      }
      const auto got = ::read(fd_, buf, n);
      if (got >= 0) return static_cast<std::size_t>(got);
      if (errno != EINTR) throw InputError(name_, std::string("read failed: ") + std::strerror(errno));
    }
  }
  std::string name() const override { return name_; }

 private:
  static constexpr int kWaitSliceMs = 100;
  int fd_;
  std::string name_;
  bool owned_;
  bool stream_ = false;
};

// Replays bytes already read (for sniffing) before the rest of the source.
class PrefixedSource final : public ByteSource {
 public:
  PrefixedSource(std::string prefix, std::unique_ptr<ByteSource> rest) : prefix_(std::move(prefix)), rest_(std::move(rest)) {}
  std::size_t read(char* buf, std::size_t n) override {
    if (pos_ < prefix_.size()) {
      const std::size_t k = std::min(n, prefix_.size() - pos_);
      std::memcpy(buf, prefix_.data() + pos_, k);
      pos_ += k;
      return k;
    }
    return rest_->read(buf, n);
  }
  std::string name() const override { return rest_->name(); }

 private:
  std::string prefix_;
  std::size_t pos_ = 0;
  std::unique_ptr<ByteSource> rest_;
};

constexpr std::size_t kInputChunk = 1 << 16;

class GzipSource final : public ByteSource {
 public:
  explicit GzipSource(std::unique_ptr<ByteSource> in) : in_(std::move(in)), buffer_(kInputChunk) {
    std::memset(&z_, 0, sizeof(z_));
    if (inflateInit2(&z_, 15 + 32) != Z_OK) throw std::runtime_error("zlib: inflateInit2 failed");
  }
  ~GzipSource() override { inflateEnd(&z_); }
  std::size_t read(char* buf, std::size_t n) override {
    z_.next_out = reinterpret_cast<Bytef*>(buf);
    z_.avail_out = static_cast<uInt>(n);
    while (z_.avail_out == n && !finished_) {
      if (z_.avail_in == 0) {
        z_.avail_in = static_cast<uInt>(in_->read(buffer_.data(), buffer_.size()));
        z_.next_in = reinterpret_cast<Bytef*>(buffer_.data());
        if (z_.avail_in == 0) {
          if (!at_member_start_) throw InputError(in_->name(), "gzip data ends early (truncated file?)");
          finished_ = true;
          break;
        }
      }
      at_member_start_ = false;
      const int rc = inflate(&z_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        inflateReset(&z_);  // concatenated members continue the stream
        at_member_start_ = true;
      } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
        throw InputError(in_->name(), std::string("corrupt gzip data: ") + (z_.msg ? z_.msg : "inflate failed"));
      }
    }
    return n - z_.avail_out;
  }
  std::string name() const override { return in_->name(); }

 private:
  std::unique_ptr<ByteSource> in_;
  std::vector<char> buffer_;
  z_stream z_;
  bool finished_ = false;
  bool at_member_start_ = true;
};

class ZstdSource final : public ByteSource {
 public:
  explicit ZstdSource(std::unique_ptr<ByteSource> in) : in_(std::move(in)), buffer_(ZSTD_DStreamInSize()) {
    stream_ = ZSTD_createDStream();
    ZSTD_initDStream(stream_);
  }
  ~ZstdSource() override { ZSTD_freeDStream(stream_); }
  std::size_t read(char* buf, std::size_t n) override {
    ZSTD_outBuffer out{buf, n, 0};
    while (out.pos == 0) {
      if (input_.pos == input_.size) {
        const auto got = in_->read(buffer_.data(), buffer_.size());
        if (got == 0) {
          if (last_rc_ != 0) throw InputError(in_->name(), "zstd data ends early (truncated file?)");
          return 0;
        }
        input_ = {buffer_.data(), got, 0};
      }
      last_rc_ = ZSTD_decompressStream(stream_, &out, &input_);
      if (ZSTD_isError(last_rc_)) throw InputError(in_->name(), std::string("corrupt zstd data: ") + ZSTD_getErrorName(last_rc_));
    }
    return out.pos;
  }
  std::string name() const override { return in_->name(); }

 private:
  std::unique_ptr<ByteSource> in_;
  std::vector<char> buffer_;
  ZSTD_DStream* stream_;
  ZSTD_inBuffer input_{nullptr, 0, 0};
  std::size_t last_rc_ = 0;
};

}  // namespace

std::unique_ptr<ByteSource> openByteSource(const std::string& path) {
  std::unique_ptr<ByteSource> raw;
  if (path == "-") {
    raw = std::make_unique<FdSource>(0, "<stdin>", false);
  } else {
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) throw InputError(path, std::string("cannot open: ") + std::strerror(errno));
    raw = std::make_unique<FdSource>(fd, path, true);
  }
  std::string magic(4, '\0');
  std::size_t have = 0;
  while (have < 4) {
    const auto got = raw->read(magic.data() + have, 4 - have);
    if (got == 0) break;
    have += got;
  }
  magic.resize(have);
  const bool gzip = have >= 2 && static_cast<unsigned char>(magic[0]) == 0x1f && static_cast<unsigned char>(magic[1]) == 0x8b;
  const bool zstd = have == 4 && magic == std::string("\x28\xb5\x2f\xfd", 4);
  auto source = std::make_unique<PrefixedSource>(magic, std::move(raw));
  if (gzip) return std::make_unique<GzipSource>(std::move(source));
  if (zstd) return std::make_unique<ZstdSource>(std::move(source));
  return source;
}

}  // namespace posgeom::corpus
