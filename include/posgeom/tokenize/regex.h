#pragma once
// A compiled PCRE2 pattern with full Unicode classes (UTF + UCP), JIT-compiled when possible.
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace posgeom::tokenize {

class Regex {
 public:
  // Throws InputError naming `where` when the pattern does not compile.
  Regex(const std::string& pattern, const std::string& where);
  ~Regex();
  Regex(const Regex&) = delete;
  Regex& operator=(const Regex&) = delete;

  // Non-overlapping matches [begin, end) left to right; `text` must be valid UTF-8.
  std::vector<std::pair<std::size_t, std::size_t>> findAll(std::string_view text) const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// GPT-2's pre-tokenizer pattern (also BLOOM's and the ByteLevel default).
extern const char* const kGpt2SplitPattern;

}  // namespace posgeom::tokenize
