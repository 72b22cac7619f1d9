#include "posgeom/tokenize/pipeline_tokenizer.h"

#include <algorithm>

#include "posgeom/tokenize/unicode.h"

namespace posgeom::tokenize {

PipelineTokenizer::PipelineTokenizer(Pipeline pipeline) : pipeline_(std::move(pipeline)) {
  vocab_size_ = pipeline_.model_vocab_size;
  for (const auto& t : pipeline_.added_tokens) vocab_size_ = std::max<int64_t>(vocab_size_, int64_t{t.id} + 1);
  // Longest first, so that "<|endoftext|>" wins over a shorter token it contains.
  std::stable_sort(pipeline_.added_tokens.begin(), pipeline_.added_tokens.end(),
                   [](const AddedToken& a, const AddedToken& b) { return a.content.size() > b.content.size(); });
  pipeline_.added_tokens.erase(std::remove_if(pipeline_.added_tokens.begin(), pipeline_.added_tokens.end(),
                                              [](const AddedToken& t) { return t.content.empty(); }),
                               pipeline_.added_tokens.end());
}

void PipelineTokenizer::encodeSegment(std::string_view text, bool at_start, std::vector<int32_t>& out,
                                      EncodeStats& stats) const {
  if (text.empty()) return;
  std::string normalized_storage;
  if (pipeline_.normalizer) normalized_storage = pipeline_.normalizer(std::string(text), at_start);
  const std::string_view normalized = pipeline_.normalizer ? std::string_view(normalized_storage) : text;
  if (!pipeline_.pre_tokenizer) {
    pipeline_.model(normalized, out, stats);
    return;
  }
  std::vector<std::string> pieces;
  pieces.reserve(normalized.size() / 4);
  pipeline_.pre_tokenizer(normalized, at_start, pieces);
  for (const auto& p : pieces) pipeline_.model(p, out, stats);
}

std::vector<int32_t> PipelineTokenizer::doEncode(std::string_view raw, EncodeStats& stats, bool continuation) const {
  std::string sanitized;
  if (!pipeline_.byte_level && !isValidUtf8(raw)) {
    sanitized = sanitizeUtf8(raw, stats.invalid_utf8_replaced);
    raw = sanitized;
  }
  std::vector<int32_t> out;
  out.reserve(raw.size() / 3);
  bool at_start = !continuation;
  std::size_t pos = 0;
  while (pos < raw.size()) {
    // The earliest added token at or after pos (longest wins at the same position).
    std::size_t best_at = std::string_view::npos;
    const AddedToken* best = nullptr;
    for (const auto& t : pipeline_.added_tokens) {
      const auto at = raw.find(t.content, pos);
      if (at < best_at) {
        best_at = at;
        best = &t;
      }
    }
    const std::size_t end = best ? best_at : raw.size();
    if (end > pos) {
      encodeSegment(raw.substr(pos, end - pos), at_start, out, stats);
      at_start = false;
    }
    if (!best) break;
    out.push_back(best->id);
    at_start = false;
    pos = best_at + best->content.size();
  }
  return out;
}

}  // namespace posgeom::tokenize
