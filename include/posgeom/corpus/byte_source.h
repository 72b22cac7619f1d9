#pragma once
// Bytes from a file or standard input, decompressed on the fly when they are gzip or
// zstd (detected from the magic bytes, not the file name). Memory is one buffer.
#include <cstddef>
#include <memory>
#include <string>

namespace posgeom::corpus {

class ByteSource {
 public:
  virtual ~ByteSource() = default;
  // Up to n bytes into buf; 0 at the end. Throws InputError naming the source on corrupt data.
  virtual std::size_t read(char* buf, std::size_t n) = 0;
  virtual std::string name() const = 0;
};

// "-" is standard input.
std::unique_ptr<ByteSource> openByteSource(const std::string& path);

}  // namespace posgeom::corpus
