#pragma once
// Text to token ids, exactly as the model's own tokenizer does it.
#include <cstdint>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace posgeom::tokenize {

struct EncodeStats {
  std::size_t invalid_utf8_replaced = 0;  // sequences replaced by U+FFFD (non-byte-level tokenizers)
  std::size_t unknown_tokens = 0;         // pieces that became the unknown token
};

// What surrounds a document when it is fed to the model for analysis: BOS for Llama,
// [CLS] ... [SEP] for BERT, nothing for GPT-2 and BLOOM.
struct Framing {
  std::vector<int32_t> prefix;
  std::vector<int32_t> suffix;
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;
  // Encodes text without adding special tokens. `continuation`: the text continues a
  // document already begun (chunked reading), so nothing that marks a start is added.
  std::vector<int32_t> encode(std::string_view text, EncodeStats& stats, bool continuation = false) const {
    return doEncode(text, stats, continuation);
  }
  // One more than the largest id the tokenizer can produce.
  virtual int64_t vocabSize() const = 0;
  // "GPT-2 byte-level BPE (tokenizer.json)", ...
  virtual std::string describe() const = 0;

  const Framing& framing() const { return framing_; }
  void setFraming(Framing f) { framing_ = std::move(f); }

 protected:
  virtual std::vector<int32_t> doEncode(std::string_view text, EncodeStats& stats, bool continuation) const = 0;

 private:
  Framing framing_;
};

// From a tokenizer directory, in order of preference: tokenizer.json; vocab.json +
// merges.txt (GPT-2); vocab.txt (BERT, options from tokenizer_config.json);
// tokenizer.model (SentencePiece). Throws InputError naming the directory and what it
// looked for.
std::unique_ptr<Tokenizer> loadTokenizer(const std::filesystem::path& dir);

}  // namespace posgeom::tokenize
