#include "posgeom/tokenize/regex.h"

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include "posgeom/base/error.h"

namespace posgeom::tokenize {

const char* const kGpt2SplitPattern =
    R"('s|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+)";

struct Regex::Impl {
  pcre2_code* code = nullptr;
};

Regex::Regex(const std::string& pattern, const std::string& where) : impl_(std::make_unique<Impl>()) {
  int error = 0;
  PCRE2_SIZE offset = 0;
  impl_->code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(), PCRE2_UTF | PCRE2_UCP,
                              &error, &offset, nullptr);
  if (impl_->code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof(message));
    throw InputError(where, "regex does not compile at offset " + std::to_string(offset) + ": " +
                                reinterpret_cast<const char*>(message));
  }
  pcre2_jit_compile(impl_->code, PCRE2_JIT_COMPLETE);  // falls back to the interpreter if JIT is unavailable
}

Regex::~Regex() { pcre2_code_free(impl_->code); }

std::vector<std::pair<std::size_t, std::size_t>> Regex::findAll(std::string_view text) const {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  pcre2_match_data* match = pcre2_match_data_create_from_pattern(impl_->code, nullptr);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  std::size_t start = 0;
  uint32_t options = 0;
  while (start <= text.size()) {
    const int rc = pcre2_match(impl_->code, subject, text.size(), start, options, match, nullptr);
    if (rc < 0) break;
    const PCRE2_SIZE* ov = pcre2_get_ovector_pointer(match);
    if (ov[1] == ov[0]) {  // empty match: step one code point to avoid looping
      if (ov[0] >= text.size()) break;
      start = ov[0] + 1;
      while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
      continue;
    }
    out.emplace_back(ov[0], ov[1]);
    start = ov[1];
    options = PCRE2_NO_UTF_CHECK;  // validated on the first call
  }
  pcre2_match_data_free(match);
  return out;
}

}  // namespace posgeom::tokenize
