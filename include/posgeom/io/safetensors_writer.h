#pragma once
// Writes safetensors files (outputs, state files, generated checkpoints) atomically.
#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "posgeom/io/dtype.h"

namespace posgeom::io {

class SafetensorsWriter {
 public:
  // Copies `nbytes` from `data`; nbytes must equal numel(shape) x dtypeSize(dtype).
  void add(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data, std::size_t nbytes);
  void addF32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& values);
  void addF64(const std::string& name, std::vector<int64_t> shape, const std::vector<double>& values);
  void addI64(const std::string& name, std::vector<int64_t> shape, const std::vector<int64_t>& values);
  // No copy now: `fill` writes the tensor's bytes into a buffer of the right size during
  // write(), one tensor at a time, so whatever it reads must live until then.
  using Fill = std::function<void(std::byte* out)>;
  void addDeferred(const std::string& name, DType dtype, std::vector<int64_t> shape, Fill fill);
  void setMetadata(const std::string& key, const std::string& value) { metadata_[key] = value; }
  void write(const std::filesystem::path& path) const;

 private:
  struct Pending {
    DType dtype;
    std::vector<int64_t> shape;
    std::vector<std::byte> bytes;
    std::size_t nbytes = 0;
    Fill fill;  // set: bytes is empty and fill makes them at write time
  };
  std::map<std::string, Pending> tensors_;
  std::map<std::string, std::string> metadata_;
};

}  // namespace posgeom::io
