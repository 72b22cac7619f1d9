#pragma once
// The Hugging Face pipeline: added tokens matched in the raw text, then normalizer,
// pre-tokenizer and model on the text between them.
#include <functional>
#include <string>
#include <vector>

#include "posgeom/tokenize/normalizer.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::tokenize {

struct AddedToken {
  std::string content;
  int32_t id = 0;
  bool special = false;
};

using PieceModel = std::function<void(std::string_view piece, std::vector<int32_t>& out, EncodeStats& stats)>;

struct Pipeline {
  std::string description;
  Normalizer normalizer;       // may be empty
  PreTokenizer pre_tokenizer;  // may be empty: the whole text is one piece
  PieceModel model;
  int64_t model_vocab_size = 0;
  std::vector<AddedToken> added_tokens;  // matched verbatim in the text, longest first
  bool byte_level = false;  // bytes are encoded as they are; otherwise invalid UTF-8 is replaced
};

class PipelineTokenizer final : public Tokenizer {
 public:
  explicit PipelineTokenizer(Pipeline pipeline);
  int64_t vocabSize() const override { return vocab_size_; }
  std::string describe() const override { return pipeline_.description; }

 private:
  std::vector<int32_t> doEncode(std::string_view text, EncodeStats& stats, bool continuation) const override;
  void encodeSegment(std::string_view text, bool at_start, std::vector<int32_t>& out, EncodeStats& stats) const;
  Pipeline pipeline_;
  int64_t vocab_size_ = 0;
};

}  // namespace posgeom::tokenize
