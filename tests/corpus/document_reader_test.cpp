#include "posgeom/corpus/document_reader.h"

#include <zlib.h>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/tokenizer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::vector<corpus::TextChunk> readAll(corpus::DocumentReader& r) {
  std::vector<corpus::TextChunk> out;
  while (auto c = r.next()) out.push_back(*c);
  return out;
}

TEST(DocumentReader, ChunkCutFollowsLineStarts) {
  EXPECT_EQ(corpus::chunkCut("ab\ncd\nef", 4), 3u);      // after "ab\n", before 'c'
  EXPECT_EQ(corpus::chunkCut("ab\n\ncd", 3), 4u);        // not between two newlines
  EXPECT_EQ(corpus::chunkCut("ab\n cd\nx", 4), 7u);      // not before a space: the next safe cut
  EXPECT_EQ(corpus::chunkCut("no newline here", 5), 0u);
}

TEST(DocumentReader, LargeTextComesInChunksThatReassemble) {
  POSGEOM_REQUIRE_SHARED("data/corpora/tinyshakespeare.txt");
  corpus::TextReaderOptions o;
  o.chunk_bytes = 4096;
  const auto path = (sharedDir() / "data/corpora/tinyshakespeare.txt").string();
  auto r = corpus::openDocuments(path, o);
  const auto chunks = readAll(*r);
  ASSERT_GT(chunks.size(), 200u);
  std::string joined;
  for (const auto& c : chunks) {
    joined += c.text;
    EXPECT_LE(c.text.size(), 3 * o.chunk_bytes);
    EXPECT_EQ(c.label, "tinyshakespeare.txt");
  }
  EXPECT_EQ(joined, readFile(path));
  EXPECT_TRUE(chunks.front().document_start);
  EXPECT_TRUE(chunks.back().document_end);
  EXPECT_EQ(r->stats().documents, 1);
}

TEST(DocumentReader, ChunkedTokenizationEqualsWholeText) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  const auto path = (sharedDir() / "data/corpora/wikitext-excerpt.txt").string();
  for (const char* name : {"gpt2", "llama2", "bert-base-uncased"}) {
    const auto tokenizer = tokenize::loadTokenizer(sharedDir() / "data/tokenizers" / name);
    corpus::TextReaderOptions o;
    o.chunk_bytes = 2048;
    auto r = corpus::openDocuments(path, o);
    std::vector<int32_t> chunked;
    tokenize::EncodeStats stats;
    while (auto c = r->next()) {
      const auto ids = tokenizer->encode(c->text, stats, !c->document_start);
      chunked.insert(chunked.end(), ids.begin(), ids.end());
    }
    EXPECT_EQ(chunked, tokenizer->encode(readFile(path), stats)) << name;
  }
}

TEST(DocumentReader, OverlongLinesAreStillCut) {
  ScratchDir s;
  std::string line;
  for (int i = 0; i < 20000; ++i) line += "word ";
  writeFile(s / "one-line.txt", line);
  corpus::TextReaderOptions o;
  o.chunk_bytes = 1024;
  auto r = corpus::openDocuments((s / "one-line.txt").string(), o);
  const auto chunks = readAll(*r);
  std::string joined;
  for (const auto& c : chunks) {
    EXPECT_LE(c.text.size(), 17u * o.chunk_bytes);
    joined += c.text;
  }
  EXPECT_EQ(joined, line);
  EXPECT_GT(chunks.size(), 5u);
}

TEST(DocumentReader, DirectoryIsSortedFilesLabelledByName) {
  ScratchDir s;
  writeFile(s / "b.txt", "second");
  writeFile(s / "a.txt", "first");
  writeFile(s / ".hidden", "skipped");
  auto r = corpus::openDocuments(s.path().string(), {});
  const auto chunks = readAll(*r);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].label, "a.txt");
  EXPECT_EQ(chunks[0].text, "first");
  EXPECT_EQ(chunks[1].label, "b.txt");
  EXPECT_EQ(r->stats().documents, 2);
}

TEST(DocumentReader, PatternsSelectFilesOfADirectory) {
  ScratchDir s;
  writeFile(s / "wiki-2.txt", "two");
  writeFile(s / "wiki-1.txt", "one");
  writeFile(s / "code-1.txt", "not this");
  auto r = corpus::openDocuments((s / "wiki-*.txt").string(), {});
  const auto chunks = readAll(*r);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].label, "wiki-1.txt");
  EXPECT_EQ(chunks[1].text, "two");
  try {
    corpus::openDocuments((s / "web-*.txt").string(), {});
    FAIL() << "a pattern without matches must be an error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (s / "web-*.txt").string() + ": matches no files");
  }
  EXPECT_THROW(corpus::corpusFiles((s / "missing.txt").string()), InputError);
}

TEST(DocumentReader, JsonLinesWithTextAndLabelFields) {
  ScratchDir s;
  writeFile(s / "c.jsonl", R"({"body": "one", "topic": "x"})"
                           "\n\n"
                           R"({"body": "two", "topic": 7})"
                           "\nnot json\n"
                           R"({"other": 1})"
                           "\n");
  corpus::TextReaderOptions o;
  o.text_field = "body";
  o.label_field = "topic";
  auto r = corpus::openDocuments((s / "c.jsonl").string(), o);
  const auto chunks = readAll(*r);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].text, "one");
  EXPECT_EQ(chunks[0].label, "x");
  EXPECT_EQ(chunks[1].label, "7");
  EXPECT_EQ(r->stats().skipped_rows, 2);
}

TEST(DocumentReader, CompressedJsonLinesAreRecognisedByName) {
  ScratchDir s;
  const std::string rows = "{\"text\": \"one\"}\n{\"text\": \"two\"}\n";
  gzFile gz = gzopen((s / "c.jsonl.gz").c_str(), "wb");
  gzwrite(gz, rows.data(), static_cast<unsigned>(rows.size()));
  gzclose(gz);
  auto r = corpus::openDocuments((s / "c.jsonl.gz").string(), {});
  const auto chunks = readAll(*r);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[1].text, "two");
  EXPECT_EQ(chunks[1].label, "c.jsonl.gz");
}

TEST(DocumentReader, StrictJsonLinesNamesTheLine) {
  ScratchDir s;
  writeFile(s / "c.jsonl", "{\"text\": \"ok\"}\n{broken\n");
  corpus::TextReaderOptions o;
  o.strict = true;
  auto r = corpus::openDocuments((s / "c.jsonl").string(), o);
  r->next();
  try {
    r->next();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("c.jsonl: line 2 is not a JSON object"), std::string::npos) << e.what();
  }
}

TEST(DocumentReader, EmptyFileIsOneEmptyDocument) {
  ScratchDir s;
  writeFile(s / "e.txt", "");
  auto r = corpus::openDocuments((s / "e.txt").string(), {});
  const auto chunks = readAll(*r);
  ASSERT_EQ(chunks.size(), 1u);
  EXPECT_EQ(chunks[0].text, "");
  EXPECT_THROW(corpus::openDocuments((s / "missing.txt").string(), {}), InputError);
}

}  // namespace
}  // namespace posgeom::testing
