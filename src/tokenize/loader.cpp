#include <memory>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/formats.h"

namespace posgeom::tokenize {
namespace fs = std::filesystem;

std::unique_ptr<Tokenizer> loadTokenizer(const fs::path& dir) {
  if (!fs::is_directory(dir)) throw InputError(dir.string(), "tokenizer directory does not exist");
  if (fs::exists(dir / "tokenizer.json")) return loadTokenizerJson(dir / "tokenizer.json");
  if (fs::exists(dir / "vocab.json") && fs::exists(dir / "merges.txt"))
    return loadGpt2Files(dir / "vocab.json", dir / "merges.txt");
  if (fs::exists(dir / "vocab.txt")) {
    BertVocabOptions options;
    if (fs::exists(dir / "tokenizer_config.json")) {
      const auto config = io::JsonConfig::load(dir / "tokenizer_config.json");
      options.lowercase = config.boolean({"do_lower_case"}, true);
      if (config.has("strip_accents")) options.strip_accents = config.boolean({"strip_accents"}, options.lowercase);
      options.tokenize_chinese_chars = config.boolean({"tokenize_chinese_chars"}, true);
    }
    return loadBertVocab(dir / "vocab.txt", options);
  }
  if (fs::exists(dir / "tokenizer.model")) return loadSentencePiece(dir / "tokenizer.model");
  throw InputError(dir.string(), "no tokenizer found (looked for tokenizer.json, vocab.json + merges.txt, vocab.txt, "
                                 "tokenizer.model); give one with --tokenizer DIR, or a corpus of token ids (.bin, .npy)");
}

}  // namespace posgeom::tokenize
