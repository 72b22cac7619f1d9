#include "posgeom/tokenize/unicode.h"

#include <utf8proc.h>

#include <cstdlib>
#include <memory>
#include <stdexcept>

namespace posgeom::tokenize {

int32_t decodeUtf8(std::string_view text, std::size_t& pos) {
  utf8proc_int32_t cp = -1;
  const auto n = utf8proc_iterate(reinterpret_cast<const utf8proc_uint8_t*>(text.data() + pos),
                                  static_cast<utf8proc_ssize_t>(text.size() - pos), &cp);
  if (n <= 0) {
    pos += 1;
    return -1;
  }
  pos += static_cast<std::size_t>(n);
  return cp;
}

void appendUtf8(std::string& out, int32_t cp) {
  utf8proc_uint8_t buf[4];
  const auto n = utf8proc_encode_char(cp, buf);
  out.append(reinterpret_cast<const char*>(buf), static_cast<std::size_t>(n));
}

std::string sanitizeUtf8(std::string_view text, std::size_t& replacements) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t start = pos;
    const int32_t cp = decodeUtf8(text, pos);
    if (cp < 0) {
      out += "\xEF\xBF\xBD";
      ++replacements;
    } else {
      out.append(text.substr(start, pos - start));
    }
  }
  return out;
}

bool isValidUtf8(std::string_view text) {
  std::size_t pos = 0;
  while (pos < text.size())
    if (decodeUtf8(text, pos) < 0) return false;
  return true;
}

namespace {
std::string mapWith(std::string_view text, int options) {
  utf8proc_uint8_t* out = nullptr;
  const auto n = utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()),
                              static_cast<utf8proc_ssize_t>(text.size()), &out,
                              static_cast<utf8proc_option_t>(options));
  if (n < 0) throw std::runtime_error(std::string("utf8proc: ") + utf8proc_errmsg(n));
  std::unique_ptr<utf8proc_uint8_t, decltype(&std::free)> owned(out, &std::free);
  return std::string(reinterpret_cast<const char*>(out), static_cast<std::size_t>(n));
}
}  // namespace

std::string normalizeNfd(std::string_view t) { return mapWith(t, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE); }
std::string normalizeNfc(std::string_view t) { return mapWith(t, UTF8PROC_STABLE | UTF8PROC_COMPOSE); }
std::string normalizeNfkc(std::string_view t) {
  return mapWith(t, UTF8PROC_STABLE | UTF8PROC_COMPOSE | UTF8PROC_COMPAT);
}
std::string normalizeNfkd(std::string_view t) {
  return mapWith(t, UTF8PROC_STABLE | UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT);
}

std::string lowercase(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  std::size_t pos = 0;
  while (pos < text.size()) {
    const int32_t cp = decodeUtf8(text, pos);
    if (cp >= 0) appendUtf8(out, utf8proc_tolower(cp));
  }
  return out;
}

std::string stripAccents(std::string_view text) {
  const std::string nfd = normalizeNfd(text);
  std::string out;
  out.reserve(nfd.size());
  std::size_t pos = 0;
  while (pos < nfd.size()) {
    const int32_t cp = decodeUtf8(nfd, pos);
    if (cp >= 0 && utf8proc_category(cp) != UTF8PROC_CATEGORY_MN) appendUtf8(out, cp);
  }
  return out;
}

bool isWhitespace(int32_t cp) {
  if (cp == ' ' || cp == '\t' || cp == '\n' || cp == '\r') return true;
  return utf8proc_category(cp) == UTF8PROC_CATEGORY_ZS;
}

bool isControl(int32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return false;
  const auto c = utf8proc_category(cp);
  return c == UTF8PROC_CATEGORY_CC || c == UTF8PROC_CATEGORY_CF || c == UTF8PROC_CATEGORY_CN ||
         c == UTF8PROC_CATEGORY_CO;
}

bool isPunctuation(int32_t cp) {
  if ((cp >= 33 && cp <= 47) || (cp >= 58 && cp <= 64) || (cp >= 91 && cp <= 96) || (cp >= 123 && cp <= 126))
    return true;
  const auto c = utf8proc_category(cp);
  return c >= UTF8PROC_CATEGORY_PC && c <= UTF8PROC_CATEGORY_PO;
}

bool isCjk(int32_t cp) {
  return (cp >= 0x4E00 && cp <= 0x9FFF) || (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x20000 && cp <= 0x2A6DF) ||
         (cp >= 0x2A700 && cp <= 0x2B73F) || (cp >= 0x2B740 && cp <= 0x2B81F) || (cp >= 0x2B820 && cp <= 0x2CEAF) ||
         (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x2F800 && cp <= 0x2FA1F);
}

}  // namespace posgeom::tokenize
