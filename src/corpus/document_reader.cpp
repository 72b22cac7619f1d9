#include "posgeom/corpus/document_reader.h"

#include <fnmatch.h>

#include <algorithm>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "posgeom/base/error.h"
#include "posgeom/corpus/byte_source.h"

namespace posgeom::corpus {
namespace fs = std::filesystem;
namespace {

bool isSpace(char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'; }

// Lines longer than this many chunks are cut inside the line.
constexpr std::size_t kMaxLineChunks = 16;

// Inside a line: before a single space between two non-spaces (where " word" starts a
// piece for the regex pre-tokenizers), else at a UTF-8 character boundary.
std::size_t fallbackCut(const std::string& buffer, std::size_t target) {
  for (std::size_t i = std::min(target, buffer.size() - 1); i > 1; --i)
    if (buffer[i] == ' ' && !isSpace(buffer[i - 1]) && !isSpace(buffer[i + 1])) return i;
  std::size_t i = std::min(target, buffer.size());
  while (i > 1 && (static_cast<unsigned char>(buffer[i]) & 0xC0) == 0x80) --i;
  return i;
}

// One document from a byte source, handed out in chunks.
class ChunkedText {
 public:
  ChunkedText(std::unique_ptr<ByteSource> source, std::string label, std::size_t chunk_bytes)
      : source_(std::move(source)), label_(std::move(label)), chunk_bytes_(chunk_bytes) {}

  std::optional<TextChunk> next(TextReaderStats& stats) {
    if (done_) return std::nullopt;
    while (!eof_ && buffer_.size() < 2 * chunk_bytes_) fill();
    std::size_t cut = eof_ ? buffer_.size() : chunkCut(buffer_, chunk_bytes_);
    while (cut == 0 && !eof_ && buffer_.size() < kMaxLineChunks * chunk_bytes_) {  // a long line: read on
      fill();
      cut = eof_ ? buffer_.size() : chunkCut(buffer_, chunk_bytes_);
    }
    if (cut == 0 && !eof_) cut = fallbackCut(buffer_, chunk_bytes_);  // memory stays bounded
    TextChunk chunk{label_, buffer_.substr(0, cut), first_, false};
    buffer_.erase(0, cut);
    first_ = false;
    chunk.document_end = eof_ && buffer_.empty();
    done_ = chunk.document_end;
    stats.bytes += static_cast<int64_t>(chunk.text.size());
    return chunk;
  }

 private:
  void fill() {
    const std::size_t old = buffer_.size();
    buffer_.resize(old + chunk_bytes_);
    const auto got = source_->read(buffer_.data() + old, chunk_bytes_);
    buffer_.resize(old + got);
    eof_ = got == 0;
  }
  std::unique_ptr<ByteSource> source_;
  std::string label_;
  std::size_t chunk_bytes_;
  std::string buffer_;
  bool eof_ = false;
  bool first_ = true;
  bool done_ = false;
};

std::string labelOf(const std::string& path) { return path == "-" ? "stdin" : fs::path(path).filename().string(); }

class TextFileReader final : public DocumentReader {
 public:
  TextFileReader(std::vector<std::string> files, const TextReaderOptions& options)
      : files_(std::move(files)), options_(options) {}
  std::optional<TextChunk> next() override {
    for (;;) {
      if (!current_) {
        if (index_ >= files_.size()) return std::nullopt;
        const auto& f = files_[index_++];
        current_ = std::make_unique<ChunkedText>(openByteSource(f), labelOf(f), options_.chunk_bytes);
        ++stats_.documents;
      }
      if (auto chunk = current_->next(stats_)) return chunk;
      current_.reset();
    }
  }
  const TextReaderStats& stats() const override { return stats_; }

 private:
  std::vector<std::string> files_;
  TextReaderOptions options_;
  std::size_t index_ = 0;
  std::unique_ptr<ChunkedText> current_;
  TextReaderStats stats_;
};

class JsonLinesReader final : public DocumentReader {
 public:
  JsonLinesReader(const std::string& path, const TextReaderOptions& options)
      : source_(openByteSource(path)), label_(labelOf(path)), options_(options) {}

  std::optional<TextChunk> next() override {
    std::string line;
    while (readLine(line)) {
      ++line_number_;
      if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
      stats_.bytes += static_cast<int64_t>(line.size()) + 1;
      auto row = nlohmann::json::parse(line, nullptr, false);
      std::string problem;
      if (row.is_discarded() || !row.is_object()) {
        problem = "is not a JSON object";
      } else if (!row.contains(options_.text_field) || !row[options_.text_field].is_string()) {
        problem = "has no string field '" + options_.text_field + "'";
      } else if (!options_.label_field.empty() && !row.contains(options_.label_field)) {
        problem = "has no label field '" + options_.label_field + "'";
      }
      if (!problem.empty()) {
        if (options_.strict) throw InputError(source_->name(), "line " + std::to_string(line_number_) + " " + problem);
        if (stats_.skipped_rows++ == 0) first_problem_ = "line " + std::to_string(line_number_) + " " + describeRow(row, problem);
        continue;
      }
      std::string label = label_;
      if (!options_.label_field.empty()) {
        const auto& l = row[options_.label_field];
        label = l.is_string() ? l.get<std::string>() : l.dump();
      }
      ++stats_.documents;
      return TextChunk{label, row[options_.text_field].get<std::string>(), true, true};
    }
    // Rows that all lack the field would read as an empty corpus: say why instead.
    if (stats_.documents == 0 && stats_.skipped_rows > 0)
      throw InputError(source_->name(), "none of its " + std::to_string(stats_.skipped_rows) + " rows has text to read: " +
                                            first_problem_ + " (--text-field and --label-field name the fields)");
    return std::nullopt;
  }
  const TextReaderStats& stats() const override { return stats_; }

 private:
  // "has no string field 'text' (its fields: content, id)".
  static std::string describeRow(const nlohmann::json& row, const std::string& problem) {
    if (!row.is_object()) return problem;
    std::string fields;
    for (const auto& [key, value] : row.items()) fields += (fields.empty() ? "" : ", ") + key;
    return problem + " (its fields: " + (fields.empty() ? "none" : fields) + ")";
  }

  bool readLine(std::string& line) {
    line.clear();
    for (;;) {
      if (pos_ == buffer_.size()) {
        buffer_.resize(1 << 16);
        buffer_.resize(source_->read(buffer_.data(), buffer_.size()));
        pos_ = 0;
        if (buffer_.empty()) return !line.empty();
      }
      const auto nl = buffer_.find('\n', pos_);
      if (nl == std::string::npos) {
        line.append(buffer_, pos_, std::string::npos);
        pos_ = buffer_.size();
      } else {
        line.append(buffer_, pos_, nl - pos_);
        pos_ = nl + 1;
        return true;
      }
    }
  }
  std::unique_ptr<ByteSource> source_;
  std::string label_;
  TextReaderOptions options_;
  std::string buffer_;
  std::size_t pos_ = 0;
  int64_t line_number_ = 0;
  std::string first_problem_;
  TextReaderStats stats_;
};

bool isJsonLines(const std::string& path) {
  const auto name = fs::path(path).filename().string();
  return name.find(".jsonl") != std::string::npos || name.find(".ndjson") != std::string::npos;
}

}  // namespace

std::size_t chunkCut(const std::string& buffer, std::size_t target) {
  // The last safe cut at or before target, else the first one after it; 0 if none.
  const std::size_t limit = std::min(target, buffer.size());
  for (std::size_t i = limit; i > 0; --i)
    if (buffer[i - 1] == '\n' && i < buffer.size() && !isSpace(buffer[i])) return i;
  for (std::size_t i = limit; i < buffer.size(); ++i)
    if (buffer[i - 1] == '\n' && !isSpace(buffer[i])) return i;
  return 0;
}

std::vector<std::string> corpusFiles(const std::string& path) {
  if (path == "-") return {path};
  const fs::path p(path);
  const std::string name = p.filename().string();
  const bool pattern = !fs::exists(p) && name.find_first_of("*?[") != std::string::npos;
  if (!pattern && !fs::is_directory(p)) {
    if (!fs::exists(p)) throw InputError(path, "corpus does not exist");
    return {path};
  }
  const fs::path dir = pattern ? (p.has_parent_path() ? p.parent_path() : fs::path(".")) : p;
  std::vector<std::string> files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string file = e.path().filename().string();
    if (e.is_regular_file() && file.front() != '.' && (!pattern || ::fnmatch(name.c_str(), file.c_str(), 0) == 0))
      files.push_back(e.path().string());
  }
  if (ec) throw InputError(path, "cannot list " + dir.string() + ": " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw InputError(path, pattern ? "matches no files" : "directory holds no files");
  return files;
}

std::unique_ptr<DocumentReader> openDocuments(const std::string& path, const TextReaderOptions& options) {
  auto files = corpusFiles(path);
  if (files.size() == 1 && files[0] == path && isJsonLines(path)) return std::make_unique<JsonLinesReader>(path, options);
  return std::make_unique<TextFileReader>(std::move(files), options);
}

}  // namespace posgeom::corpus
