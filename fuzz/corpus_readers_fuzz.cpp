// The corpus readers: plain text, JSON Lines (gzip and zstd detected from the bytes),
// .npy and raw .bin token files. The first byte picks the reader.
#include "fuzz_target.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/corpus/document_reader.h"

namespace posgeom::fuzz {

void corpusReaders(const uint8_t* data, std::size_t size) {
  if (size == 0) return;
  static const char* const kNames[] = {"corpus.txt", "corpus.jsonl", "corpus.npy", "corpus.bin"};
  const auto file = scratchDir() / kNames[data[0] % 4];
  writeBytes(file, data + 1, size - 1);
  if (data[0] % 4 < 2) {
    corpus::TextReaderOptions options;
    options.label_field = "label";
    options.chunk_bytes = 64;  // small chunks: more cuts to get wrong
    auto reader = corpus::openDocuments(file.string(), options);
    while (reader->next()) {
    }
  } else {
    corpus::CorpusOptions options;
    options.path = file.string();
    auto stream = corpus::openCorpus(options, nullptr, 1000);
    while (auto block = stream->next())
      for (const int32_t id : block->ids)
        if (id < 0 || id >= 1000) __builtin_trap();
  }
}

}  // namespace posgeom::fuzz

POSGEOM_FUZZ_ENTRY(posgeom::fuzz::corpusReaders)
