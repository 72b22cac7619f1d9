#pragma once
// Text documents, streamed in bounded chunks, each with the label that the cluster
// analysis groups by.
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace posgeom::corpus {

struct TextChunk {
  std::string label;     // file name, or the JSONL label field
  std::string text;      // at most about chunk_bytes, cut after a line end
  bool document_start;   // the first chunk of its document
  bool document_end;     // the last chunk of its document
};

struct TextReaderOptions {
  std::string text_field = "text";  // JSON Lines
  std::string label_field;          // JSON Lines; empty: the file name labels every row
  bool strict = false;              // a malformed JSON Lines row fails instead of being skipped
  std::size_t chunk_bytes = 1 << 20;
};

struct TextReaderStats {
  int64_t documents = 0;
  int64_t bytes = 0;
  int64_t skipped_rows = 0;  // malformed JSON Lines rows
};

class DocumentReader {
 public:
  virtual ~DocumentReader() = default;
  virtual std::optional<TextChunk> next() = 0;
  virtual const TextReaderStats& stats() const = 0;
};

// A text file, "-" (standard input), a directory of text files (sorted, each a document
// labelled by its name), a pattern like dir/wiki-*.txt (the matching files of dir, the
// same way), or JSON Lines (*.jsonl, *.jsonl.gz, *.jsonl.zst, ...: each row a document).
// Compression is detected from the content.
std::unique_ptr<DocumentReader> openDocuments(const std::string& path, const TextReaderOptions& options);

// The files a directory or a pattern stands for (sorted; hidden files left out), or the
// path itself. Throws InputError when nothing is there.
std::vector<std::string> corpusFiles(const std::string& path);

// Where a chunk may end: after a '\n' that is followed by a non-whitespace byte, so that
// regex pre-tokenizers split both sides exactly as they would the whole text.
std::size_t chunkCut(const std::string& buffer, std::size_t target);

}  // namespace posgeom::corpus
