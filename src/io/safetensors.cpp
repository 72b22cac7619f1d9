#include "posgeom/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "posgeom/base/error.h"

namespace posgeom::io {
namespace {

// Real headers are kilobytes to a few megabytes; refuse absurd claims before allocating.
constexpr std::uint64_t kMaxHeaderBytes = 100ull << 20;

std::uint64_t readLittleEndian64(const std::byte* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<std::uint64_t>(p[i]);
  return v;
}

std::size_t checkedByteLength(const std::vector<int64_t>& shape, DType dtype, const std::string& where) {
  std::size_t n = dtypeSize(dtype);
  for (int64_t dim : shape) {
    const auto d = static_cast<std::size_t>(dim);
    if (d != 0 && n > std::numeric_limits<std::size_t>::max() / d)
      throw InputError(where, "shape " + shapeToString(shape) + " overflows");
    n *= d;
  }
  return n;
}

SafetensorsHeader::Entry parseEntry(const std::string& name, const nlohmann::json& spec,
                                    const std::string& label) {
  const std::string where = label;
  const std::string tensor = "tensor '" + name + "'";
  if (!spec.is_object()) throw InputError(where, tensor + ": header entry is not an object");
  const auto dt = spec.find("dtype");
  if (dt == spec.end() || !dt->is_string()) throw InputError(where, tensor + ": missing dtype");
  const auto dtype = parseDType(dt->get<std::string>());
  if (!dtype) throw InputError(where, tensor + ": unsupported dtype '" + dt->get<std::string>() + "'");
  const auto sh = spec.find("shape");
  if (sh == spec.end() || !sh->is_array()) throw InputError(where, tensor + ": missing shape");
  std::vector<int64_t> shape;
  for (const auto& d : *sh) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      throw InputError(where, tensor + ": shape must hold non-negative integers");
    shape.push_back(d.get<int64_t>());
  }
  const auto off = spec.find("data_offsets");
  if (off == spec.end() || !off->is_array() || off->size() != 2 || !(*off)[0].is_number_unsigned() ||
      !(*off)[1].is_number_unsigned())
    throw InputError(where, tensor + ": data_offsets must be two non-negative integers");
  const auto begin = (*off)[0].get<std::uint64_t>();
  const auto end = (*off)[1].get<std::uint64_t>();
  if (end < begin) throw InputError(where, tensor + ": data_offsets end before they begin");
  const std::size_t expected = checkedByteLength(shape, *dtype, where + ": " + tensor);
  if (end - begin != expected) {
    std::ostringstream msg;
    msg << tensor << ": " << (end - begin) << " bytes of data but dtype " << dtypeName(*dtype)
        << " and shape " << shapeToString(shape) << " need " << expected;
    throw InputError(where, msg.str());
  }
  return {name, *dtype, std::move(shape), static_cast<std::size_t>(begin), static_cast<std::size_t>(end)};
}

}  // namespace

int64_t TensorView::numel() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

std::string shapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

SafetensorsHeader parseSafetensorsHeader(const std::byte* bytes, std::size_t size, const std::string& label) {
  if (size < 8) throw InputError(label, "truncated safetensors file (" + std::to_string(size) + " bytes)");
  const std::uint64_t header_len = readLittleEndian64(bytes);
  if (header_len > size - 8)
    throw InputError(label, "header length " + std::to_string(header_len) + " runs past the end of the file (" +
                                std::to_string(size) + " bytes)");
  if (header_len > kMaxHeaderBytes)
    throw InputError(label, "header length " + std::to_string(header_len) + " is implausibly large");
  const char* text = reinterpret_cast<const char*>(bytes + 8);
  nlohmann::json header = nlohmann::json::parse(text, text + header_len, nullptr, /*allow_exceptions=*/false);
  if (header.is_discarded()) throw InputError(label, "header is not valid JSON");
  if (!header.is_object()) throw InputError(label, "header is not a JSON object");

  SafetensorsHeader out;
  out.data_start = 8 + static_cast<std::size_t>(header_len);
  const std::size_t data_size = size - out.data_start;
  for (const auto& [name, spec] : header.items()) {
    if (name == "__metadata__") {
      if (!spec.is_object()) throw InputError(label, "__metadata__ is not an object");
      for (const auto& [k, v] : spec.items()) {
        if (!v.is_string()) throw InputError(label, "__metadata__ value for '" + k + "' is not a string");
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    out.entries.push_back(parseEntry(name, spec, label));
    if (out.entries.back().end > data_size)
      throw InputError(label, "tensor '" + name + "': data_offsets end at " + std::to_string(out.entries.back().end) +
                                  ", past the " + std::to_string(data_size) + " bytes of data");
  }
  std::sort(out.entries.begin(), out.entries.end(),
            [](const auto& a, const auto& b) { return a.begin != b.begin ? a.begin < b.begin : a.end < b.end; });
  for (std::size_t i = 1; i < out.entries.size(); ++i) {
    const auto& prev = out.entries[i - 1];
    const auto& cur = out.entries[i];
    if (cur.begin < prev.end && cur.begin != cur.end && prev.begin != prev.end)
      throw InputError(label, "tensors '" + prev.name + "' and '" + cur.name + "' overlap in the data");
  }
  return out;
}

SafetensorsFile SafetensorsFile::open(const std::filesystem::path& path) {
  SafetensorsFile f;
  f.file_ = MappedFile::open(path);
  const auto header = parseSafetensorsHeader(f.file_->data(), f.file_->size(), path.string());
  f.metadata_ = header.metadata;
  for (const auto& e : header.entries) {
    TensorView v;
    v.name = e.name;
    v.dtype = e.dtype;
    v.shape = e.shape;
    v.data = f.file_->data() + header.data_start + e.begin;
    v.nbytes = e.end - e.begin;
    v.owner = f.file_;
    v.file_mapped = true;
    f.tensors_.emplace(e.name, std::move(v));
  }
  return f;
}

const TensorView* SafetensorsFile::find(const std::string& name) const {
  const auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const TensorView& SafetensorsFile::get(const std::string& name) const {
  if (const auto* v = find(name)) return *v;
  throw InputError(path().string(), "no tensor named '" + name + "'");
}

}  // namespace posgeom::io
