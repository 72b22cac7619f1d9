#include "posgeom/base/error.h"
#include "posgeom/tokenize/formats.h"
#include "test_support.h"
#include "tokenizer_fixtures.h"

namespace posgeom::testing {
namespace {

TEST(SentencePiece, MatchesTheLlama2ReferenceIdForId) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/llama2/tokenizer.model");
  POSGEOM_REQUIRE_SHARED("fixtures/tokenizers/llama2_expected.json");
  const auto tokenizer = tokenize::loadSentencePiece(sharedDir() / "data/tokenizers/llama2/tokenizer.model");
  for (const auto& c : tokenizerCases("llama2_expected.json")) EXPECT_EQ(encodeAll(*tokenizer, c.text), c.ids) << c.text;
  EXPECT_EQ(tokenizer->vocabSize(), 32000);
  EXPECT_EQ(tokenizer->framing().prefix, (std::vector<int32_t>{1}));  // BOS
}

TEST(SentencePiece, InvalidUtf8IsReplacedAndCounted) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/llama2/tokenizer.model");
  const auto tokenizer = tokenize::loadSentencePiece(sharedDir() / "data/tokenizers/llama2/tokenizer.model");
  tokenize::EncodeStats stats;
  const auto ids = tokenizer->encode(std::string("a\xff\xfe b"), stats);
  EXPECT_EQ(stats.invalid_utf8_replaced, 2u);
  EXPECT_EQ(ids, encodeAll(*tokenizer, "a\xEF\xBF\xBD\xEF\xBF\xBD b"));
}

TEST(SentencePiece, NotAModelIsABadInput) {
  ScratchDir s;
  writeFile(s / "tokenizer.model", "definitely not a protobuf");
  EXPECT_THROW(tokenize::loadSentencePiece(s / "tokenizer.model"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
