#pragma once
// WordPiece (BERT): greedy longest-match-first with a continuation prefix.
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "posgeom/tokenize/tokenizer.h"
#include "posgeom/tokenize/word_cache.h"

namespace posgeom::tokenize {

struct WordPieceOptions {
  std::string unk_token = "[UNK]";
  std::string continuing_prefix = "##";
  std::size_t max_chars_per_word = 100;
};

class WordPieceModel {
 public:
  // Throws InputError naming `where` when the unknown token is not in the vocabulary.
  WordPieceModel(std::unordered_map<std::string, int32_t> vocab, WordPieceOptions options, const std::string& where);
  // Warns (once, with the count) when words longer than max_chars_per_word became the
  // unknown token: as Hugging Face does, but a whole text taken as one word (no
  // pre-tokenizer) would otherwise become one token without a word.
  ~WordPieceModel();
  WordPieceModel(const WordPieceModel&) = delete;
  WordPieceModel& operator=(const WordPieceModel&) = delete;
  // A word that cannot be covered, or is too long, becomes the single unknown token.
  void encode(std::string_view word, std::vector<int32_t>& out, EncodeStats& stats) const;
  int64_t vocabSize() const { return vocab_size_; }
  std::optional<int32_t> idOf(const std::string& token) const;

 private:
  void encodeUncached(std::string_view word, std::vector<int32_t>& out) const;
  std::unordered_map<std::string, int32_t> vocab_;
  WordPieceOptions options_;
  int32_t unk_id_ = 0;
  int64_t vocab_size_ = 0;
  WordCache cache_;
  std::string where_;
  mutable std::atomic<std::size_t> overlong_words_{0}, overlong_characters_{0};  // every occurrence
};

}  // namespace posgeom::tokenize
