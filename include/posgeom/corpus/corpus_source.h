#pragma once
// `--corpus`: what kind of corpus a path names, opened as a token stream.
#include <cstdint>
#include <memory>
#include <string>

#include "posgeom/corpus/document_reader.h"
#include "posgeom/corpus/token_stream.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::corpus {

struct CorpusOptions {
  std::string path;         // file, directory, "-", *.jsonl[.gz|.zst], *.bin, *.npy, or "random"
  TextReaderOptions text;   // text and JSON Lines
  std::string token_dtype;  // .bin override
  uint64_t seed = 0;        // "random"
};

bool isPretokenized(const std::string& path);

// `tokenizer` is needed for text corpora only (may be null otherwise); `vocab_size`
// bounds pre-tokenized and random ids.
std::unique_ptr<TokenStream> openCorpus(const CorpusOptions& options, const tokenize::Tokenizer* tokenizer,
                                        int64_t vocab_size);

}  // namespace posgeom::corpus
