#pragma once
// Cuts a token stream into windows of T tokens (DESIGN §3): consecutive and
// non-overlapping by default, or with random gaps; each framed for the model (BOS,
// [CLS] ... [SEP]) and carrying its document's label.
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "posgeom/corpus/token_stream.h"

namespace posgeom::corpus {

struct WindowOptions {
  int64_t seq_len = 0;          // T, framing tokens included
  int64_t max_windows = 0;      // 0: until the corpus ends
  bool random_offsets = false;  // a uniform gap of [0, T) tokens before each window
  uint64_t seed = 0;
  bool cross_documents = false;  // default: a window lies inside one document
  int64_t max_per_document = 0;  // > 0: at most this many windows from each document, then skip to the next
  tokenize::Framing framing;
  int64_t shard_index = 0;  // keep windows whose index % shard_count == shard_index
  int64_t shard_count = 1;
};

struct Window {
  std::vector<int32_t> ids;  // [T]
  std::string label;         // the document the window starts in
  int64_t index = 0;         // over all shards
};

struct WindowStats {
  int64_t windows = 0;       // cut, over all shards
  int64_t windows_kept = 0;  // this shard's
  int64_t tokens_read = 0;
  int64_t documents_seen = 0;
  int64_t longest_document = 0;
};

class WindowSampler {
 public:
  // Throws InputError when the window has no room for content after its framing.
  WindowSampler(TokenStream& stream, WindowOptions options);
  // The next window of this shard; nullopt at the end. A corpus that yields no window at
  // all is an InputError that gives the token counts.
  std::optional<Window> next();
  WindowStats stats() const;

 private:
  bool pull();
  void drawGap();
  TokenStream& stream_;
  WindowOptions options_;
  int64_t content_len_ = 0;
  std::vector<int32_t> buffer_;
  std::size_t start_ = 0;  // first unconsumed token in buffer_
  std::vector<std::pair<std::size_t, std::string>> labels_;  // (buffer position, label) where documents begin
  int64_t gap_ = 0;
  int64_t current_document_tokens_ = 0;
  int64_t current_document_windows_ = 0;
  bool skipping_document_ = false;
  std::mt19937_64 rng_;
  WindowStats stats_;
  bool exhausted_ = false;
};

}  // namespace posgeom::corpus
