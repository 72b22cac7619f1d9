#include "posgeom/io/safetensors_writer.h"

#include <algorithm>
#include <cstring>
#include <vector>
#include <nlohmann/json.hpp>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/safetensors.h"

namespace posgeom::io {

namespace {
std::size_t bytesOf(DType dtype, const std::vector<int64_t>& shape) {
  std::size_t n = dtypeSize(dtype);
  for (int64_t d : shape) n *= static_cast<std::size_t>(d);
  return n;
}
}  // namespace

void SafetensorsWriter::add(const std::string& name, DType dtype, std::vector<int64_t> shape, const void* data,
                            std::size_t nbytes) {
  if (bytesOf(dtype, shape) != nbytes)
    throw std::logic_error("safetensors writer: tensor '" + name + "' has " + std::to_string(nbytes) +
                           " bytes for shape " + shapeToString(shape));
  Pending p{dtype, std::move(shape), std::vector<std::byte>(nbytes), nbytes, {}};
  if (nbytes > 0) std::memcpy(p.bytes.data(), data, nbytes);
  tensors_[name] = std::move(p);
}

void SafetensorsWriter::addDeferred(const std::string& name, DType dtype, std::vector<int64_t> shape, Fill fill) {
  const auto nbytes = bytesOf(dtype, shape);
  tensors_[name] = Pending{dtype, std::move(shape), {}, nbytes, std::move(fill)};
}

void SafetensorsWriter::addF32(const std::string& name, std::vector<int64_t> shape, const std::vector<float>& v) {
  add(name, DType::kF32, std::move(shape), v.data(), v.size() * sizeof(float));
}
void SafetensorsWriter::addF64(const std::string& name, std::vector<int64_t> shape, const std::vector<double>& v) {
  add(name, DType::kF64, std::move(shape), v.data(), v.size() * sizeof(double));
}
void SafetensorsWriter::addI64(const std::string& name, std::vector<int64_t> shape, const std::vector<int64_t>& v) {
  add(name, DType::kI64, std::move(shape), v.data(), v.size() * sizeof(int64_t));
}

void SafetensorsWriter::write(const std::filesystem::path& path) const {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata_.empty()) header["__metadata__"] = metadata_;
  // Widest dtypes first: with the data section 8-byte aligned, every tensor then starts
  // at a multiple of its element size, with no gaps (which the format forbids).
  std::vector<const std::pair<const std::string, Pending>*> order;
  for (const auto& entry : tensors_) order.push_back(&entry);
  std::stable_sort(order.begin(), order.end(), [](const auto* a, const auto* b) {
    return dtypeSize(a->second.dtype) > dtypeSize(b->second.dtype);
  });
  std::size_t offset = 0;
  for (const auto* entry : order) {
    const auto& t = entry->second;
    header[entry->first] = {{"dtype", std::string(dtypeName(t.dtype))},
                            {"shape", t.shape},
                            {"data_offsets", {offset, offset + t.nbytes}}};
    offset += t.nbytes;
  }
  std::string text = header.dump();
  // Pad with spaces so the data section starts 8-byte aligned, as the reference writer does.
  text.append((8 - text.size() % 8) % 8, ' ');
  writeFileAtomically(path, [&](std::ostream& out) {
    std::uint64_t n = text.size();
    unsigned char len[8];
    for (int i = 0; i < 8; ++i) len[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xff);
    out.write(reinterpret_cast<const char*>(len), 8);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    std::vector<std::byte> made;
    for (const auto* entry : order) {
      const auto& t = entry->second;
      const std::byte* bytes = t.bytes.data();
      if (t.fill) {
        made.assign(t.nbytes, std::byte{0});
        t.fill(made.data());
        bytes = made.data();
      }
      out.write(reinterpret_cast<const char*>(bytes), static_cast<std::streamsize>(t.nbytes));
    }
  });
}

}  // namespace posgeom::io
