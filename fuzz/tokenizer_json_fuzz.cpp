// tokenizer.json: models (BPE, WordPiece, Unigram), normalizers, pre-tokenizers with
// their regexes, added tokens; a tokenizer that loads then encodes a fixed text.
#include "fuzz_target.h"
#include "posgeom/tokenize/formats.h"

namespace posgeom::fuzz {

void tokenizerJson(const uint8_t* data, std::size_t size) {
  const auto file = scratchDir() / "tokenizer.json";
  writeBytes(file, data, size);
  const auto tokenizer = tokenize::loadTokenizerJson(file);
  tokenize::EncodeStats stats;
  const auto ids = tokenizer->encode("Hello, world! naïve café 123 \xe4\xb8\xad\xe6\x96\x87 \n\t  end", stats);
  for (const int32_t id : ids)
    if (id < 0 || id >= tokenizer->vocabSize()) __builtin_trap();
}

}  // namespace posgeom::fuzz

POSGEOM_FUZZ_ENTRY(posgeom::fuzz::tokenizerJson)
