#include "posgeom/tokenize/token_names.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TokenNames, FromEachKindOfVocabularyFile) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  const auto gpt2 = tokenize::readTokenNames(sharedDir() / "data/tokenizers/gpt2");
  ASSERT_EQ(gpt2.size(), 50257u);
  EXPECT_EQ(gpt2[15496], "Hello");  // "Hello world" encodes as 15496, 995
  EXPECT_EQ(gpt2[995], "\xC4\xA0world");
  ScratchDir s;
  std::filesystem::create_directories(s / "bert");
  std::filesystem::create_directories(s / "json");
  writeFile(s / "bert/vocab.txt", "[PAD]\n[UNK]\nthe\r\n##ing\n");
  const auto bert = tokenize::readTokenNames(s / "bert");
  EXPECT_EQ(bert, (std::vector<std::string>{"[PAD]", "[UNK]", "the", "##ing"}));
  writeFile(s / "json/tokenizer.json",
            R"({"model": {"vocab": {"a": 0, "b": 2}}, "added_tokens": [{"id": 5, "content": "<s>"}]})");
  const auto json = tokenize::readTokenNames(s / "json");
  ASSERT_EQ(json.size(), 6u);
  EXPECT_EQ(json[2], "b");
  EXPECT_EQ(tokenize::tokenName(json, 5), "<s>");
  EXPECT_EQ(tokenize::tokenName(json, 1), "#1");   // no name
  EXPECT_EQ(tokenize::tokenName(json, 99), "#99");  // past the end
  EXPECT_TRUE(tokenize::readTokenNames(s / "none").empty());
}

}  // namespace
}  // namespace posgeom::testing
