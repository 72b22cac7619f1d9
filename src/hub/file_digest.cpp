#include "posgeom/hub/file_digest.h"

#include <openssl/evp.h>

#include <algorithm>
#include <fstream>
#include <memory>
#include <vector>

#include "posgeom/base/error.h"

namespace posgeom::hub {
namespace {

constexpr std::size_t kReadChunk = 4u << 20;

bool allHex(const std::string& s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

class Digest {
 public:
  explicit Digest(DigestKind kind) : ctx_(EVP_MD_CTX_new(), EVP_MD_CTX_free) {
    if (!ctx_ || EVP_DigestInit_ex(ctx_.get(), kind == DigestKind::kSha256 ? EVP_sha256() : EVP_sha1(), nullptr) != 1)
      throw std::runtime_error("OpenSSL could not start a digest");
  }
  void update(const char* data, std::size_t size) { EVP_DigestUpdate(ctx_.get(), data, size); }
  std::string hex() {
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int size = 0;
    EVP_DigestFinal_ex(ctx_.get(), md, &size);
    static const char* digits = "0123456789abcdef";
    std::string out;
    for (unsigned int i = 0; i < size; ++i) {
      out += digits[md[i] >> 4];
      out += digits[md[i] & 15];
    }
    return out;
  }

 private:
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx_;
};

void startGitBlob(Digest& d, std::uintmax_t size) {
  const std::string prefix = "blob " + std::to_string(size);
  d.update(prefix.c_str(), prefix.size() + 1);  // with its '\0'
}

}  // namespace

DigestKind digestKindOf(const std::string& etag) {
  if (!allHex(etag)) return DigestKind::kNone;
  if (etag.size() == 64) return DigestKind::kSha256;
  if (etag.size() == 40) return DigestKind::kGitBlob;
  return DigestKind::kNone;
}

std::string fileDigest(const std::filesystem::path& file, DigestKind kind) {
  if (kind == DigestKind::kNone) return "";
  std::ifstream in(file, std::ios::binary);
  if (!in) throw InputError(file.string(), "cannot be opened to check its digest");
  Digest d(kind);
  if (kind == DigestKind::kGitBlob) startGitBlob(d, std::filesystem::file_size(file));
  std::vector<char> buffer(kReadChunk);
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    d.update(buffer.data(), static_cast<std::size_t>(in.gcount()));
  }
  if (in.bad()) throw InputError(file.string(), "cannot be read to check its digest");
  return d.hex();
}

std::string bytesDigest(const std::string& bytes, DigestKind kind) {
  if (kind == DigestKind::kNone) return "";
  Digest d(kind);
  if (kind == DigestKind::kGitBlob) startGitBlob(d, bytes.size());
  d.update(bytes.data(), bytes.size());
  return d.hex();
}

}  // namespace posgeom::hub
