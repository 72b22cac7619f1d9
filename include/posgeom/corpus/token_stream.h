#pragma once
// Token ids in document order, from text through a tokenizer, from pre-tokenized files,
// or drawn at random. Each block belongs to one labelled document.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/corpus/document_reader.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::corpus {

struct TokenBlock {
  std::vector<int32_t> ids;
  std::string label;
  bool document_start = true;
  bool document_end = true;
};

struct TokenStreamStats {
  int64_t tokens = 0;
  int64_t documents = 0;
  int64_t bytes = 0;
  int64_t invalid_utf8_replaced = 0;
  int64_t unknown_tokens = 0;
  int64_t skipped_rows = 0;
};

class TokenStream {
 public:
  virtual ~TokenStream() = default;
  virtual std::optional<TokenBlock> next() = 0;
  virtual TokenStreamStats stats() const = 0;
  virtual std::string name() const = 0;
};

// Text documents through `tokenizer` (not owned; must outlive the stream).
std::unique_ptr<TokenStream> tokenizeDocuments(std::unique_ptr<DocumentReader> documents,
                                               const tokenize::Tokenizer& tokenizer, std::string name);

// nanoGPT-style raw ids (.bin: uint16 or uint32 little-endian; dtype from `dtype`, else
// the sidecar <stem>.json {"dtype": ...}, else uint16) or a 1-D/2-D integer .npy.
// An id >= vocab_size is an InputError giving the id and its offset.
std::unique_ptr<TokenStream> openPretokenized(const std::string& path, const std::string& dtype, int64_t vocab_size);

// Endless ids drawn uniformly from [0, vocab_size): the paper's check that residual
// connections alone do not explain the geometry.
std::unique_ptr<TokenStream> randomTokens(int64_t vocab_size, uint64_t seed);

// The paper's induction probe: documents of 3 x `period` ids, each a stretch of `period`
// uniform ids repeated three times, endless. A window of at most 3 x period tokens cut
// from a document's start holds the copies at offsets 0, period and 2 x period.
std::unique_ptr<TokenStream> repeatedRandomTokens(int64_t vocab_size, uint64_t seed, int64_t period);

}  // namespace posgeom::corpus
