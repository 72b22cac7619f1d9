#pragma once
// Byte-pair encoding of one pre-tokenized piece: merges applied lowest rank first.
#include <atomic>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "posgeom/tokenize/tokenizer.h"
#include "posgeom/tokenize/word_cache.h"

namespace posgeom::tokenize {

struct BpeOptions {
  std::optional<std::string> unk_token;
  bool byte_fallback = false;  // unknown characters become <0xXX> byte tokens (Llama)
  bool ignore_merges = false;  // a piece that is itself in the vocabulary is taken whole
};

class BpeModel {
 public:
  // `merges` in rank order as (left, right) token strings. Throws InputError naming
  // `where` when a merge names a token missing from the vocabulary.
  BpeModel(std::unordered_map<std::string, int32_t> vocab, const std::vector<std::pair<std::string, std::string>>& merges,
           BpeOptions options, const std::string& where);
  // Warns (once, with the count) when characters were dropped: without an unknown token or
  // byte fallback a character outside the vocabulary is left out of the ids, as Hugging
  // Face's tokenizers leave it out, but never without a word.
  ~BpeModel();
  BpeModel(const BpeModel&) = delete;
  BpeModel& operator=(const BpeModel&) = delete;

  void encode(std::string_view piece, std::vector<int32_t>& out, EncodeStats& stats) const;
  int64_t vocabSize() const { return vocab_size_; }
  std::optional<int32_t> idOf(const std::string& token) const;
  // Under a byte-level pre-tokenizer every byte is a symbol of its own: without an unknown
  // token or byte fallback, a byte with no token would be dropped from the text without a
  // word. InputError naming `where` and the first such byte.
  void requireEveryByteSymbol(const std::string& where) const;

 private:
  void encodeUncached(std::string_view piece, std::vector<int32_t>& out, EncodeStats& stats) const;
  std::unordered_map<std::string, int32_t> vocab_;
  // (left id << 32 | right id) -> (rank, merged id)
  std::unordered_map<uint64_t, std::pair<int32_t, int32_t>> merges_;
  BpeOptions options_;
  std::optional<int32_t> unk_id_;
  std::vector<int32_t> byte_ids_;  // <0xXX> tokens, when byte_fallback
  int64_t vocab_size_ = 0;
  WordCache cache_;
  std::string where_;
  mutable std::atomic<std::size_t> dropped_{0};  // characters left out, every occurrence
};

}  // namespace posgeom::tokenize
