// Pre-tokenized corpora: raw .bin (nanoGPT) and .npy, read in blocks.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/corpus/byte_source.h"
#include "posgeom/corpus/token_stream.h"
#include "posgeom/io/json_file.h"

namespace posgeom::corpus {
namespace fs = std::filesystem;
namespace {

struct IdFormat {
  std::size_t bytes = 2;
  bool is_signed = false;
  int64_t expected_ids = -1;  // a .npy header's element count; -1: whatever the file holds
};

IdFormat formatOf(const std::string& dtype, const std::string& where) {
  if (dtype == "uint16" || dtype == "<u2" || dtype == "u2") return {2, false};
  if (dtype == "uint32" || dtype == "<u4" || dtype == "u4") return {4, false};
  if (dtype == "int32" || dtype == "<i4" || dtype == "i4") return {4, true};
  if (dtype == "int64" || dtype == "<i8" || dtype == "i8") return {8, true};
  if (dtype == "uint64" || dtype == "<u8" || dtype == "u8") return {8, false};
  if (dtype == "int16" || dtype == "<i2" || dtype == "i2") return {2, true};
  throw InputError(where, "unsupported token dtype '" + dtype + "' (use uint16, uint32, int32 or int64)");
}

class IdFileStream final : public TokenStream {
 public:
  IdFileStream(std::unique_ptr<ByteSource> source, IdFormat format, int64_t vocab_size, std::string name)
      : source_(std::move(source)), format_(format), vocab_size_(vocab_size), name_(std::move(name)) {}

  std::optional<TokenBlock> next() override {
    if (done_) return std::nullopt;
    std::vector<char> raw(kBlockIds * format_.bytes);
    std::size_t have = pending_.size();
    if (have > 0) std::memcpy(raw.data(), pending_.data(), have);
    pending_.clear();
    while (have < raw.size()) {
      const auto got = source_->read(raw.data() + have, raw.size() - have);
      if (got == 0) {
        done_ = true;
        break;
      }
      have += got;
    }
    if (have % format_.bytes != 0) {
      if (done_) throw InputError(name_, "file size is not a multiple of the " + std::to_string(format_.bytes) + "-byte token size");
      pending_.assign(raw.begin() + static_cast<std::ptrdiff_t>(have - have % format_.bytes), raw.begin() + static_cast<std::ptrdiff_t>(have));
      have -= have % format_.bytes;
    }
    TokenBlock block;
    block.label = fs::path(name_).filename().string();
    block.document_start = tokens_ == 0;
    block.document_end = done_;
    block.ids.reserve(have / format_.bytes);
    for (std::size_t i = 0; i < have; i += format_.bytes) {
      int64_t id = 0;
      if (format_.bytes == 2) {
        uint16_t v;
        std::memcpy(&v, raw.data() + i, 2);
        id = format_.is_signed ? static_cast<int16_t>(v) : v;
      } else if (format_.bytes == 4) {
        uint32_t v;
        std::memcpy(&v, raw.data() + i, 4);
        id = format_.is_signed ? static_cast<int32_t>(v) : static_cast<int64_t>(v);
      } else {
        std::memcpy(&id, raw.data() + i, 8);
      }
      const int64_t offset = tokens_ + static_cast<int64_t>(block.ids.size());
      if (id < 0 || id >= vocab_size_)
        throw InputError(name_, "token id " + std::to_string(id) + " at offset " + std::to_string(offset) +
                                    " is outside the vocabulary of " + std::to_string(vocab_size_));
      block.ids.push_back(static_cast<int32_t>(id));
    }
    tokens_ += static_cast<int64_t>(block.ids.size());
    // A header that claims other than the data holds: a truncated or padded file.
    if ((done_ || tokens_ > format_.expected_ids) && format_.expected_ids >= 0 && tokens_ != format_.expected_ids)
      throw InputError(name_, ".npy header says " + std::to_string(format_.expected_ids) + " ids but the file holds " +
                                  (done_ ? std::to_string(tokens_) : "more"));
    if (block.ids.empty() && done_ && tokens_ > 0) return std::nullopt;
    return block;
  }
  TokenStreamStats stats() const override { return {tokens_, tokens_ > 0 ? 1 : 0, tokens_ * static_cast<int64_t>(format_.bytes), 0, 0, 0}; }
  std::string name() const override { return name_; }

 private:
  static constexpr std::size_t kBlockIds = 1 << 16;
  std::unique_ptr<ByteSource> source_;
  IdFormat format_;
  int64_t vocab_size_;
  std::string name_;
  std::vector<char> pending_;
  int64_t tokens_ = 0;
  bool done_ = false;
};

// The raw text after 'key': in a .npy header dict ("'<u2', ..." or "False, ...").
std::string npyHeaderValue(const std::string& header, const std::string& key) {
  const auto at = header.find("'" + key + "'");
  if (at == std::string::npos) return "";
  auto colon = header.find(':', at);
  if (colon == std::string::npos) return "";
  ++colon;
  while (colon < header.size() && header[colon] == ' ') ++colon;
  return header.substr(colon);
}

// Reads the .npy header and leaves `source` at the first element.
IdFormat readNpyHeader(ByteSource& source, const std::string& path) {
  char prefix[10];
  std::size_t have = 0;
  while (have < sizeof(prefix)) {
    const auto got = source.read(prefix + have, sizeof(prefix) - have);
    if (got == 0) throw InputError(path, "truncated .npy header");
    have += got;
  }
  if (std::memcmp(prefix, "\x93NUMPY", 6) != 0) throw InputError(path, "not a .npy file (bad magic)");
  const int major = prefix[6];
  std::size_t header_len = static_cast<unsigned char>(prefix[8]) | (static_cast<unsigned char>(prefix[9]) << 8);
  std::string header;
  if (major >= 2) {  // 4-byte length: two more bytes to read
    char more[2];
    if (source.read(more, 2) != 2) throw InputError(path, "truncated .npy header");
    header_len |= (static_cast<std::size_t>(static_cast<unsigned char>(more[0])) << 16) |
                  (static_cast<std::size_t>(static_cast<unsigned char>(more[1])) << 24);
  }
  if (header_len > (1 << 20)) throw InputError(path, ".npy header is implausibly long");
  header.resize(header_len);
  for (std::size_t got = 0; got < header_len;) {
    const auto n = source.read(header.data() + got, header_len - got);
    if (n == 0) throw InputError(path, "truncated .npy header");
    got += n;
  }
  const std::string descr = npyHeaderValue(header, "descr");
  if (descr.size() < 3 || descr.front() != '\'') throw InputError(path, ".npy header has no 'descr'");
  if (descr[1] == '>') throw InputError(path, "big-endian .npy data is not supported");
  if (npyHeaderValue(header, "fortran_order").rfind("True", 0) == 0)
    throw InputError(path, "Fortran-ordered .npy data is not supported");
  const std::string type = descr.substr(1, descr.find('\'', 1) - 1);  // e.g. <u2, |u1
  IdFormat format = formatOf(type[0] == '|' || type[0] == '=' ? "<" + type.substr(1) : type, path);
  // 'shape': (N,) or (N, M): the ids the data must hold.
  const std::string shape = npyHeaderValue(header, "shape");
  if (shape.empty() || shape.front() != '(' || shape.find(')') == std::string::npos)
    throw InputError(path, ".npy header has no 'shape'");
  int64_t count = 1;
  std::stringstream dims(shape.substr(1, shape.find(')') - 1));
  for (std::string dim; std::getline(dims, dim, ',');) {
    if (dim.find_first_not_of(' ') == std::string::npos) continue;  // the trailing comma of (N,)
    char* end = nullptr;
    const long long v = std::strtoll(dim.c_str(), &end, 10);
    if (v < 0 || (*end != '\0' && *end != ' ')) throw InputError(path, ".npy header has a bad 'shape' " + shape);
    count *= v;
  }
  format.expected_ids = count;
  return format;
}

}  // namespace

std::unique_ptr<TokenStream> openPretokenized(const std::string& path, const std::string& dtype, int64_t vocab_size) {
  if (!fs::exists(path)) throw InputError(path, "corpus does not exist");
  auto source = openByteSource(path);
  IdFormat format;
  if (fs::path(path).extension() == ".npy") {
    format = readNpyHeader(*source, path);
  } else if (!dtype.empty()) {
    format = formatOf(dtype, option::kTokenDtype);
  } else {
    const auto sidecar = fs::path(path).replace_extension(".json");
    format = fs::exists(sidecar) ? formatOf(io::JsonConfig::load(sidecar).string({"dtype"}, "uint16"), sidecar.string())
                                 : IdFormat{2, false};
  }
  return std::make_unique<IdFileStream>(std::move(source), format, vocab_size, path);
}

}  // namespace posgeom::corpus
