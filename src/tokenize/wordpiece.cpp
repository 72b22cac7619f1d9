#include "posgeom/tokenize/wordpiece.h"

#include <spdlog/spdlog.h>

#include <algorithm>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/unicode.h"

namespace posgeom::tokenize {

WordPieceModel::WordPieceModel(std::unordered_map<std::string, int32_t> vocab, WordPieceOptions options,
                               const std::string& where)
    : vocab_(std::move(vocab)), options_(std::move(options)), where_(where) {
  const auto it = vocab_.find(options_.unk_token);
  if (it == vocab_.end()) throw InputError(where, "the unknown token '" + options_.unk_token + "' is not in the vocabulary");
  unk_id_ = it->second;
  for (const auto& [token, id] : vocab_) vocab_size_ = std::max<int64_t>(vocab_size_, int64_t{id} + 1);
}

WordPieceModel::~WordPieceModel() {
  if (const auto n = overlong_words_.load())
    spdlog::warn("{}: {} words of the text read are longer than max_input_chars_per_word {} ({} characters in all) and "
                 "each became one '{}' token",
                 where_, n, options_.max_chars_per_word, overlong_characters_.load(), options_.unk_token);
}

std::optional<int32_t> WordPieceModel::idOf(const std::string& token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void WordPieceModel::encode(std::string_view word, std::vector<int32_t>& out, EncodeStats& stats) const {
  if (word.empty()) return;
  if (word.size() > options_.max_chars_per_word) {  // bytes: at least as many as characters
    std::size_t characters = 0;
    for (std::size_t pos = 0; pos < word.size(); ++characters) decodeUtf8(word, pos);
    if (characters > options_.max_chars_per_word) {
      overlong_words_.fetch_add(1, std::memory_order_relaxed);
      overlong_characters_.fetch_add(characters, std::memory_order_relaxed);
    }
  }
  const auto before = out.size();
  encodeCached(cache_, word, out, [&](std::string_view w, std::vector<int32_t>& ids) { encodeUncached(w, ids); });
  stats.unknown_tokens += static_cast<std::size_t>(std::count(out.begin() + static_cast<std::ptrdiff_t>(before), out.end(), unk_id_));
}

void WordPieceModel::encodeUncached(std::string_view word, std::vector<int32_t>& out) const {
  // Character boundaries, so that pieces never split a code point.
  std::vector<std::size_t> bounds{0};
  for (std::size_t pos = 0; pos < word.size();) {
    decodeUtf8(word, pos);
    bounds.push_back(pos);
  }
  if (bounds.size() - 1 > options_.max_chars_per_word) {
    out.push_back(unk_id_);
    return;
  }
  std::vector<int32_t> pieces;
  std::size_t start = 0;  // index into bounds
  while (start + 1 < bounds.size()) {
    std::size_t end = bounds.size() - 1;
    std::optional<int32_t> found;
    for (; end > start; --end) {
      std::string candidate(word.substr(bounds[start], bounds[end] - bounds[start]));
      if (start > 0) candidate = options_.continuing_prefix + candidate;
      if (const auto it = vocab_.find(candidate); it != vocab_.end()) {
        found = it->second;
        break;
      }
    }
    if (!found) {
      out.push_back(unk_id_);
      return;
    }
    pieces.push_back(*found);
    start = end;
  }
  out.insert(out.end(), pieces.begin(), pieces.end());
}

}  // namespace posgeom::tokenize
