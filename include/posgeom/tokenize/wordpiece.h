#pragma once
// WordPiece (BERT): greedy longest-match-first with a continuation prefix.
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
};

}  // namespace posgeom::tokenize
