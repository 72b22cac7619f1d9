#include "posgeom/tokenize/bpe.h"

#include <spdlog/spdlog.h>

#include <cstdio>
#include <limits>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "posgeom/tokenize/unicode.h"

namespace posgeom::tokenize {
namespace {
uint64_t pairKey(int32_t a, int32_t b) { return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b); }
}  // namespace

BpeModel::BpeModel(std::unordered_map<std::string, int32_t> vocab,
                   const std::vector<std::pair<std::string, std::string>>& merges, BpeOptions options,
                   const std::string& where)
    : vocab_(std::move(vocab)), options_(std::move(options)), where_(where) {
  if (vocab_.empty()) throw InputError(where, "the vocabulary is empty: no text can be tokenized");
  for (const auto& [token, id] : vocab_) vocab_size_ = std::max<int64_t>(vocab_size_, int64_t{id} + 1);
  int32_t rank = 0;
  for (const auto& [left, right] : merges) {
    const auto l = vocab_.find(left), r = vocab_.find(right), m = vocab_.find(left + right);
    if (l == vocab_.end() || r == vocab_.end() || m == vocab_.end())
      throw InputError(where, "merge '" + left + " " + right + "' uses a token missing from the vocabulary");
    merges_.emplace(pairKey(l->second, r->second), std::make_pair(rank++, m->second));
  }
  if (options_.unk_token) {
    const auto it = vocab_.find(*options_.unk_token);
    if (it != vocab_.end()) unk_id_ = it->second;
  }
  if (options_.byte_fallback) {
    byte_ids_.assign(256, -1);
    for (int b = 0; b < 256; ++b) {
      char name[8];
      std::snprintf(name, sizeof(name), "<0x%02X>", b);
      const auto it = vocab_.find(name);
      if (it == vocab_.end()) throw InputError(where, std::string("byte_fallback without the token ") + name);
      byte_ids_[static_cast<size_t>(b)] = it->second;
    }
  }
}

BpeModel::~BpeModel() {
  if (const auto n = dropped_.load())
    spdlog::warn("{}: {} characters of the text read are outside the vocabulary and were dropped from the ids: there is "
                 "no unk_token (Hugging Face's tokenizers drop them too)",
                 where_, n);
}

void BpeModel::requireEveryByteSymbol(const std::string& where) const {
  if (unk_id_ || options_.byte_fallback) return;
  int missing = 0, first = -1;
  for (int b = 0; b < 256; ++b)
    if (!vocab_.count(byteToUnicode()[static_cast<std::size_t>(b)])) missing += 1, first = first < 0 ? b : first;
  if (missing == 0) return;
  char byte[8];
  std::snprintf(byte, sizeof(byte), "0x%02x", first);
  throw InputError(where, "the byte-level vocabulary has no token for " + std::to_string(missing) +
                              " of the 256 bytes (the first: byte " + byte + ", '" +
                              byteToUnicode()[static_cast<std::size_t>(first)] +
                              "'), and no unknown token: text holding them would lose them");
}

std::optional<int32_t> BpeModel::idOf(const std::string& token) const {
  const auto it = vocab_.find(token);
  if (it == vocab_.end()) return std::nullopt;
  return it->second;
}

void BpeModel::encode(std::string_view piece, std::vector<int32_t>& out, EncodeStats& stats) const {
  if (piece.empty() || cache_.lookup(piece, out)) return;
  std::vector<int32_t> ids;
  const auto unknown_before = stats.unknown_tokens;
  encodeUncached(piece, ids, stats);
  out.insert(out.end(), ids.begin(), ids.end());
  // A piece with unknown characters is not cached, so that each occurrence is counted.
  if (stats.unknown_tokens == unknown_before) cache_.store(piece, std::move(ids));
}

void BpeModel::encodeUncached(std::string_view piece, std::vector<int32_t>& out, EncodeStats& stats) const {
  if (options_.ignore_merges) {
    if (const auto it = vocab_.find(std::string(piece)); it != vocab_.end()) {
      out.push_back(it->second);
      return;
    }
  }
  // Start from one symbol per character; -1 marks byte-fallback ids that never merge.
  std::vector<int32_t> symbols;
  std::size_t pos = 0;
  while (pos < piece.size()) {
    const std::size_t start = pos;
    decodeUtf8(piece, pos);
    const std::string ch(piece.substr(start, pos - start));
    if (const auto it = vocab_.find(ch); it != vocab_.end()) {
      symbols.push_back(it->second);
    } else if (options_.byte_fallback) {
      for (unsigned char b : ch) symbols.push_back(byte_ids_[b]);
    } else if (unk_id_) {
      symbols.push_back(*unk_id_);
      ++stats.unknown_tokens;
    } else {
      ++stats.unknown_tokens;  // dropped, as Hugging Face does without an unk token
      dropped_.fetch_add(1, std::memory_order_relaxed);
    }
  }
  while (symbols.size() > 1) {
    int32_t best_rank = std::numeric_limits<int32_t>::max();
    std::size_t best = 0;
    int32_t merged = -1;
    for (std::size_t i = 0; i + 1 < symbols.size(); ++i) {
      const auto it = merges_.find(pairKey(symbols[i], symbols[i + 1]));
      if (it != merges_.end() && it->second.first < best_rank) {
        best_rank = it->second.first;
        best = i;
        merged = it->second.second;
      }
    }
    if (merged < 0) break;
    symbols[best] = merged;
    symbols.erase(symbols.begin() + static_cast<std::ptrdiff_t>(best) + 1);
  }
  out.insert(out.end(), symbols.begin(), symbols.end());
}

}  // namespace posgeom::tokenize
