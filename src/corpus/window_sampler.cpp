#include "posgeom/corpus/window_sampler.h"

#include <algorithm>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"

namespace posgeom::corpus {

WindowSampler::WindowSampler(TokenStream& stream, WindowOptions options)
    : stream_(stream), options_(std::move(options)), rng_(options_.seed) {
  content_len_ = options_.seq_len - static_cast<int64_t>(options_.framing.prefix.size() + options_.framing.suffix.size());
  if (content_len_ <= 0)
    throw InputError(option::kSeqLen, std::to_string(options_.seq_len) + " leaves no room for tokens after the " +
                                      std::to_string(options_.seq_len - content_len_) + " special tokens of each window");
  if (options_.max_per_document > 0 && options_.cross_documents)
    throw InputError(option::kWindowsPerDocument, "cannot be combined with --cross-documents");
  if (options_.shard_count < 1 || options_.shard_index < 0 || options_.shard_index >= options_.shard_count)
    throw InputError(option::kShard, "must be i/n with 0 <= i < n");
  drawGap();
}

void WindowSampler::drawGap() {
  gap_ = options_.random_offsets ? std::uniform_int_distribution<int64_t>(0, content_len_ - 1)(rng_) : 0;
}

bool WindowSampler::pull() {
  auto block = stream_.next();
  if (!block) return false;
  if (!block->document_start && skipping_document_) return true;  // over its quota: drop the rest
  if (block->document_start) {
    ++stats_.documents_seen;
    current_document_tokens_ = 0;
    current_document_windows_ = 0;
    skipping_document_ = false;
    if (!options_.cross_documents) {  // the tail of the last document cannot start a window
      buffer_.clear();
      labels_.clear();
      start_ = 0;
      drawGap();
    }
    labels_.emplace_back(buffer_.size(), block->label);
  } else if (labels_.empty()) {
    labels_.emplace_back(buffer_.size(), block->label);
  }
  current_document_tokens_ += static_cast<int64_t>(block->ids.size());
  stats_.longest_document = std::max(stats_.longest_document, current_document_tokens_);
  // Compact before growing, so the buffer holds about one window plus one block.
  if (start_ > 0 && start_ >= buffer_.size() / 2) {
    buffer_.erase(buffer_.begin(), buffer_.begin() + static_cast<std::ptrdiff_t>(start_));
    for (auto& [pos, label] : labels_) pos = pos > start_ ? pos - start_ : 0;
    start_ = 0;
  }
  buffer_.insert(buffer_.end(), block->ids.begin(), block->ids.end());
  return true;
}

std::optional<Window> WindowSampler::next() {
  while (!exhausted_) {
    if (options_.max_windows > 0 && stats_.windows >= options_.max_windows) break;
    const auto needed = start_ + static_cast<std::size_t>(gap_ + content_len_);
    if (buffer_.size() < needed) {
      if (!pull()) exhausted_ = true;
      continue;
    }
    const std::size_t begin = start_ + static_cast<std::size_t>(gap_);
    Window w;
    w.index = stats_.windows++;
    for (const auto& [pos, label] : labels_)
      if (pos <= begin) w.label = label;
    start_ = needed;
    if (options_.max_per_document > 0 && ++current_document_windows_ >= options_.max_per_document) {
      skipping_document_ = true;  // the rest of this document is not read into windows
      start_ = buffer_.size();
    }
    while (labels_.size() > 1 && labels_[1].first <= start_) labels_.erase(labels_.begin());
    drawGap();
    if (w.index % options_.shard_count != options_.shard_index) continue;
    w.ids = options_.framing.prefix;
    w.ids.insert(w.ids.end(), buffer_.begin() + static_cast<std::ptrdiff_t>(begin),
                 buffer_.begin() + static_cast<std::ptrdiff_t>(needed));
    w.ids.insert(w.ids.end(), options_.framing.suffix.begin(), options_.framing.suffix.end());
    ++stats_.windows_kept;
    return w;
  }
  exhausted_ = true;
  if (stats_.windows == 0) {
    const auto s = stream_.stats();
    const std::string T = std::to_string(options_.seq_len);
    if (options_.cross_documents || s.documents <= 1)
      throw InputError(stream_.name(), "corpus has " + std::to_string(s.tokens) + " tokens, fewer than one window of " + T +
                                           " (" + std::to_string(content_len_) + " after special tokens)");
    throw InputError(stream_.name(), "no document holds one window of " + T + " tokens (" + std::to_string(s.tokens) +
                                         " tokens in " + std::to_string(s.documents) + " documents, longest " +
                                         std::to_string(stats_.longest_document) +
                                         "); --cross-documents lets windows span documents");
  }
  return std::nullopt;
}

WindowStats WindowSampler::stats() const {
  auto s = stats_;
  s.tokens_read = stream_.stats().tokens;
  return s;
}

}  // namespace posgeom::corpus
