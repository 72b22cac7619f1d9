#include "posgeom/base/error.h"
#include "posgeom/tokenize/formats.h"
#include "test_support.h"
#include "tokenizer_fixtures.h"

namespace posgeom::testing {
namespace {

std::unique_ptr<tokenize::Tokenizer> gpt2() {
  const auto dir = sharedDir() / "data/tokenizers/gpt2";
  return tokenize::loadGpt2Files(dir / "vocab.json", dir / "merges.txt");
}

TEST(Gpt2Files, MatchesTheReferenceEncoderIdForId) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  POSGEOM_REQUIRE_SHARED("fixtures/tokenizers/gpt2_expected.json");
  const auto tokenizer = gpt2();
  const auto cases = tokenizerCases("gpt2_expected.json");
  ASSERT_GE(cases.size(), 10u);
  for (const auto& c : cases) EXPECT_EQ(encodeAll(*tokenizer, c.text), c.ids) << c.text;
  EXPECT_EQ(tokenizer->vocabSize(), 50257);
  EXPECT_TRUE(tokenizer->framing().prefix.empty());
}

TEST(Gpt2Files, EndOfTextIsMatchedAsASpecialToken) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  const auto ids = encodeAll(*gpt2(), "a<|endoftext|>b");
  EXPECT_EQ(ids, (std::vector<int32_t>{64, 50256, 65}));
}

TEST(Gpt2Files, InvalidUtf8IsEncodedAsBytes) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  tokenize::EncodeStats stats;
  const auto ids = gpt2()->encode(std::string("ok\xff\xfe!"), stats);
  // "ok", then bytes 0xff and 0xfe as their own byte-level symbols (U+00FF, U+00FE), then "!".
  EXPECT_EQ(ids, (std::vector<int32_t>{482, 187, 186, 0}));
  EXPECT_EQ(stats.invalid_utf8_replaced, 0u);
}

TEST(Gpt2Files, MalformedMergesLineIsNamed) {
  ScratchDir s;
  writeFile(s / "vocab.json", R"({"a": 0, "b": 1, "ab": 2})");
  writeFile(s / "merges.txt", "#version: 0.2\na b\nab\n");
  try {
    tokenize::loadGpt2Files(s / "vocab.json", s / "merges.txt");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("merges.txt: line 3"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
