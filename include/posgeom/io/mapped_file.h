#pragma once
// A read-only memory map of a whole file, so checkpoints cost page cache, not heap.
#include <cstddef>
#include <filesystem>
#include <memory>

namespace posgeom::io {

class MappedFile {
 public:
  // Throws InputError naming the file when it cannot be opened or mapped.
  static std::shared_ptr<const MappedFile> open(const std::filesystem::path& path);
  ~MappedFile();
  MappedFile(const MappedFile&) = delete;
  MappedFile& operator=(const MappedFile&) = delete;

  const std::byte* data() const { return data_; }
  std::size_t size() const { return size_; }
  const std::filesystem::path& path() const { return path_; }

 private:
  MappedFile(std::filesystem::path path, const std::byte* data, std::size_t size)
      : path_(std::move(path)), data_(data), size_(size) {}
  std::filesystem::path path_;
  const std::byte* data_;
  std::size_t size_;
};

// Lets this process's pages of [data, data + nbytes) in a read-only file mapping go (the
// whole pages inside it): they leave its resident memory and stay in the page cache, and a
// later read maps them again. What a streamed block's weights do once copied.
void dropMappedPages(const std::byte* data, std::size_t nbytes) noexcept;

}  // namespace posgeom::io
