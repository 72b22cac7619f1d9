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
  // file, directory, "-", *.jsonl[.gz|.zst], *.bin, *.npy, "random" or "repeated-random"
  std::string path;
  TextReaderOptions text;   // text and JSON Lines
  std::string token_dtype;  // .bin override
  uint64_t seed = 0;        // the generated corpora
  int64_t repeat_period = 0;  // "repeated-random": the length of each random stretch
};

bool isPretokenized(const std::string& path);
// "random" or "repeated-random": ids made up, not read (no files, no tokenizer).
bool isGenerated(const std::string& path);
// The repeat period that makes a window of T tokens three copies of one random stretch
// (the last copy one or two tokens short when 3 does not divide T).
inline int64_t repeatPeriod(int64_t window) { return (window + 2) / 3; }

// `tokenizer` is needed for text corpora only (may be null otherwise); `vocab_size`
// bounds pre-tokenized and random ids.
std::unique_ptr<TokenStream> openCorpus(const CorpusOptions& options, const tokenize::Tokenizer* tokenizer,
                                        int64_t vocab_size);

}  // namespace posgeom::corpus
