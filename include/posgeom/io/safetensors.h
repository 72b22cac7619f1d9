#pragma once
// safetensors: an 8-byte little-endian header length, a JSON header, then raw data.
// The reader maps the file and hands out views; nothing is copied.
#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "posgeom/io/dtype.h"
#include "posgeom/io/mapped_file.h"

namespace posgeom::io {

struct TensorView {
  std::string name;
  DType dtype = DType::kF32;
  std::vector<int64_t> shape;
  const std::byte* data = nullptr;  // points into the mapped file
  std::size_t nbytes = 0;
  std::shared_ptr<const void> owner;  // keeps `data` valid (a mapping, a loaded tensor) for whoever holds the view
  bool file_mapped = false;           // `data` lies in a read-only file mapping (its pages may be let go)
  int64_t numel() const;
};

std::string shapeToString(const std::vector<int64_t>& shape);  // "[2, 24, 64]"

// The validated header: entries sorted by data offset. `label` names the source in errors.
struct SafetensorsHeader {
  std::map<std::string, std::string> metadata;
  struct Entry {
    std::string name;
    DType dtype;
    std::vector<int64_t> shape;
    std::size_t begin;  // offset into the data section
    std::size_t end;
  };
  std::vector<Entry> entries;
  std::size_t data_start = 0;  // offset of the data section in the file
};

// Strict parse of a whole file image: header length within the file, valid JSON,
// known dtypes, offsets inside the data and not overlapping, bytes = numel x size.
// Throws InputError("<label>: <fault>").
SafetensorsHeader parseSafetensorsHeader(const std::byte* bytes, std::size_t size,
                                         const std::string& label);

class SafetensorsFile {
 public:
  static SafetensorsFile open(const std::filesystem::path& path);

  const std::filesystem::path& path() const { return file_->path(); }
  const std::map<std::string, std::string>& metadata() const { return metadata_; }
  const std::map<std::string, TensorView>& tensors() const { return tensors_; }
  const TensorView* find(const std::string& name) const;
  // Throws InputError naming the file and the tensor when absent.
  const TensorView& get(const std::string& name) const;
  std::shared_ptr<const MappedFile> mapping() const { return file_; }

 private:
  std::shared_ptr<const MappedFile> file_;
  std::map<std::string, std::string> metadata_;
  std::map<std::string, TensorView> tensors_;
};

}  // namespace posgeom::io
