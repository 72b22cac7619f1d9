#include <sentencepiece_processor.h>

#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/formats.h"
#include "test_support.h"
#include "tokenizer_fixtures.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

fs::path llamaModel() { return sharedDir() / "data/tokenizers/llama2/tokenizer.model"; }

TEST(SentencePieceModel, MatchesTheLlama2ReferenceIdForId) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/llama2/tokenizer.model");
  POSGEOM_REQUIRE_SHARED("fixtures/tokenizers/llama2_expected.json");
  const auto tokenizer = tokenize::loadSentencePiece(llamaModel());
  for (const auto& c : tokenizerCases("llama2_expected.json")) EXPECT_EQ(encodeAll(*tokenizer, c.text), c.ids) << c.text;
  EXPECT_EQ(tokenizer->vocabSize(), 32000);
  EXPECT_EQ(tokenizer->framing().prefix, (std::vector<int32_t>{1}));  // BOS
}

// The SentencePiece library is the oracle: same ids on every line of real corpora
// (prose, wiki markup, Python code), each encoded as one text as the library does.
TEST(SentencePieceModel, AgreesWithTheLibraryOnRealCorpora) {
  POSGEOM_REQUIRE_SHARED("data/corpora/topics/github-topic0.txt");
  sentencepiece::SentencePieceProcessor library;
  ASSERT_TRUE(library.Load(llamaModel().string()).ok());
  const auto ours = tokenize::loadSentencePiece(llamaModel());
  std::size_t lines = 0;
  for (const char* corpus : {"tinyshakespeare.txt", "wikitext-excerpt.txt", "topics/github-topic0.txt",
                             "topics/openwebtext-topic1.txt"}) {
    std::istringstream in(readFile(sharedDir() / "data/corpora" / corpus).substr(0, 60000));
    std::string line;
    while (std::getline(in, line)) {
      std::vector<int> expected;
      ASSERT_TRUE(library.Encode(line, &expected).ok());
      ASSERT_EQ(encodeAll(*ours, line), std::vector<int32_t>(expected.begin(), expected.end())) << corpus << ": " << line;
      ++lines;
    }
  }
  EXPECT_GT(lines, 1000u);
}

TEST(SentencePieceModel, ContinuationChunksGetNoDummyPrefix) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/llama2/tokenizer.model");
  const auto t = tokenize::loadSentencePiece(llamaModel());
  tokenize::EncodeStats stats;
  const auto whole = t->encode("Hello\nWorld", stats);
  auto first = t->encode("Hello\n", stats);
  const auto rest = t->encode("World", stats, /*continuation=*/true);
  first.insert(first.end(), rest.begin(), rest.end());
  EXPECT_EQ(first, whole);
}

TEST(SentencePieceModel, InvalidUtf8IsReplacedAndCounted) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/llama2/tokenizer.model");
  const auto tokenizer = tokenize::loadSentencePiece(llamaModel());
  tokenize::EncodeStats stats;
  const auto ids = tokenizer->encode(std::string("a\xff\xfe b"), stats);
  EXPECT_EQ(stats.invalid_utf8_replaced, 2u);
  EXPECT_EQ(ids, encodeAll(*tokenizer, "a\xEF\xBF\xBD\xEF\xBF\xBD b"));
}

TEST(SentencePieceModel, NotAModelIsABadInput) {
  ScratchDir s;
  writeFile(s / "tokenizer.model", "definitely not a protobuf");
  EXPECT_THROW(tokenize::loadSentencePiece(s / "tokenizer.model"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
