#include <sentencepiece_processor.h>

#include <memory>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/formats.h"
#include "posgeom/tokenize/unicode.h"

namespace posgeom::tokenize {
namespace {

class SentencePieceTokenizer final : public Tokenizer {
 public:
  explicit SentencePieceTokenizer(const std::filesystem::path& file) {
    const auto status = processor_.Load(file.string());
    if (!status.ok()) throw InputError(file.string(), "not a SentencePiece model: " + status.ToString());
    if (processor_.bos_id() >= 0) setFraming({{processor_.bos_id()}, {}});
  }

  int64_t vocabSize() const override { return processor_.GetPieceSize(); }
  std::string describe() const override { return "SentencePiece (tokenizer.model)"; }
  // Every Encode call starts with SentencePiece's dummy-prefix space, so a chunk cut
  // inside a document starts as if it were a new one.
  bool chunkableAtLineStarts() const override { return false; }

 private:
  std::vector<int32_t> doEncode(std::string_view text, EncodeStats& stats, bool /*continuation*/) const override {
    std::string valid;
    if (!isValidUtf8(text)) {
      valid = sanitizeUtf8(text, stats.invalid_utf8_replaced);
      text = valid;
    }
    std::vector<int> ids;
    const auto status = processor_.Encode(std::string(text), &ids);
    if (!status.ok()) throw std::runtime_error("SentencePiece: " + status.ToString());
    const int unk = processor_.unk_id();
    for (int id : ids) stats.unknown_tokens += (id == unk);
    return std::vector<int32_t>(ids.begin(), ids.end());
  }

  sentencepiece::SentencePieceProcessor processor_;
};

}  // namespace

std::unique_ptr<Tokenizer> loadSentencePiece(const std::filesystem::path& model_file) {
  return std::make_unique<SentencePieceTokenizer>(model_file);
}

}  // namespace posgeom::tokenize
