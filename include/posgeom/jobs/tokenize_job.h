#pragma once
// `posgeom tokenize`: a text corpus to ids, as JSON or as a nanoGPT-style .bin. Torch-free.
#include <filesystem>
#include <string>

#include "posgeom/corpus/document_reader.h"

namespace posgeom::jobs {

struct TokenizeJob {
  std::string model;                  // model directory or hub name (its tokenizer files), or
  std::string revision;               // of a hub name: branch, tag or commit (empty: main)
  std::filesystem::path tokenizer;    // a tokenizer directory
  std::string input;                  // any text corpus openDocuments() reads
  corpus::TextReaderOptions text;
  std::string format = "json";        // json: one array on stdout or --out; bin: uint16/uint32 + sidecar
  std::filesystem::path out;          // required for bin
  bool force = false;                 // replace an existing --out (never the input or tokenizer)
  bool add_special = false;           // the tokenizer's framing around each document
};

struct TokenizeSummary {
  int64_t tokens = 0;
  int64_t documents = 0;
  int64_t bytes = 0;
  int64_t invalid_utf8_replaced = 0;
  std::string dtype;  // bin
};

TokenizeSummary runTokenizeJob(const TokenizeJob& job);

}  // namespace posgeom::jobs
