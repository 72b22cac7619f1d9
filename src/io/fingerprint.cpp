#include "posgeom/io/fingerprint.h"

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "posgeom/base/error.h"

namespace posgeom::io {
namespace fs = std::filesystem;
namespace {

constexpr std::uintmax_t kEndBytes = 256 * 1024;
constexpr std::uintmax_t kBlockBytes = 16 * 1024;
constexpr int kBlocks = 32;

// FNV-1a, 64 bits: identity, not security.
struct Digest {
  uint64_t value = 1469598103934665603ull;
  void add(const void* data, std::size_t n) {
    const auto* bytes = static_cast<const unsigned char*>(data);
    for (std::size_t i = 0; i < n; ++i) value = (value ^ bytes[i]) * 1099511628211ull;
  }
  void add(const std::string& s) {
    add(s.data(), s.size());
    add("\0", 1);
  }
  void add(uint64_t v) { add(&v, sizeof(v)); }
};

void addRange(Digest& digest, std::ifstream& in, const fs::path& file, std::uintmax_t offset, std::uintmax_t n) {
  std::string buffer(n, '\0');
  in.seekg(static_cast<std::streamoff>(offset));
  in.read(buffer.data(), static_cast<std::streamsize>(n));
  if (in.gcount() != static_cast<std::streamsize>(n)) throw InputError(file.string(), "cannot be read to fingerprint it");
  digest.add(buffer.data(), buffer.size());
}

void addFile(Digest& digest, const fs::path& file) {
  if (!fs::is_regular_file(file)) throw InputError(file.string(), "is not a regular file: it has no content to fingerprint");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), std::string("cannot be read to fingerprint it: ") + std::strerror(errno));
  const auto size = fs::file_size(file);
  digest.add(file.filename().string());
  digest.add(static_cast<uint64_t>(size));
  if (size <= 2 * kEndBytes + kBlocks * kBlockBytes) {
    addRange(digest, in, file, 0, size);
    return;
  }
  addRange(digest, in, file, 0, kEndBytes);
  const auto middle = size - 2 * kEndBytes - kBlockBytes;
  for (int b = 0; b < kBlocks; ++b) addRange(digest, in, file, kEndBytes + middle * b / (kBlocks - 1), kBlockBytes);
  addRange(digest, in, file, size - kEndBytes, kEndBytes);
}

std::string hex(const Digest& digest) {
  char text[20];
  std::snprintf(text, sizeof(text), "%016llx", static_cast<unsigned long long>(digest.value));
  return text;
}

void addWholeFile(Digest& digest, const fs::path& file) {
  if (!fs::is_regular_file(file)) throw InputError(file.string(), "is not a regular file: it has no content to digest");
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), std::string("cannot be read to digest it: ") + std::strerror(errno));
  std::string buffer(1 << 20, '\0');
  while (in.read(buffer.data(), static_cast<std::streamsize>(buffer.size())) || in.gcount() > 0)
    digest.add(buffer.data(), static_cast<std::size_t>(in.gcount()));
  if (in.bad()) throw InputError(file.string(), "cannot be read to digest it");
}

bool isModelFile(const fs::path& p) {
  const auto name = p.filename().string();
  return name == "config.json" || p.extension() == ".safetensors" || p.extension() == ".bin" ||
         name.find(".safetensors.index.json") != std::string::npos || name.find(".bin.index.json") != std::string::npos;
}

}  // namespace

std::string fingerprintFiles(const std::vector<fs::path>& files) {
  Digest digest;
  for (const auto& f : files) addFile(digest, f);
  return hex(digest);
}

std::string modelFingerprint(const fs::path& model_dir) {
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(model_dir))
    if (e.is_regular_file() && isModelFile(e.path())) files.push_back(e.path());
  std::sort(files.begin(), files.end(), [](const fs::path& a, const fs::path& b) { return a.filename() < b.filename(); });
  return fingerprintFiles(files);
}

std::string contentDigest(const std::vector<fs::path>& files) {
  Digest digest;
  for (const auto& f : files) addWholeFile(digest, f);
  return hex(digest);
}

}  // namespace posgeom::io
