#include "posgeom/base/error.h"
#include "posgeom/tokenize/tokenizer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(TokenizerLoader, PicksEachFormatFromTheSharedData) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  const auto base = sharedDir() / "data/tokenizers";
  EXPECT_NE(tokenize::loadTokenizer(base / "gpt2")->describe().find("GPT-2"), std::string::npos);
  EXPECT_NE(tokenize::loadTokenizer(base / "bert-base-uncased")->describe().find("WordPiece"), std::string::npos);
  EXPECT_NE(tokenize::loadTokenizer(base / "llama2")->describe().find("SentencePiece"), std::string::npos);
}

TEST(TokenizerLoader, TokenizerJsonIsPreferred) {
  ScratchDir s;
  writeFile(s / "tokenizer.json", R"({"model": {"type": "WordPiece", "vocab": {"[UNK]": 0}}})");
  writeFile(s / "vocab.txt", "[UNK]\n");
  EXPECT_NE(tokenize::loadTokenizer(s.path())->describe().find("tokenizer.json"), std::string::npos);
}

TEST(TokenizerLoader, TokenizerConfigControlsCase) {
  ScratchDir s;
  writeFile(s / "vocab.txt", "[UNK]\nA\na\n");
  writeFile(s / "tokenizer_config.json", R"({"do_lower_case": false})");
  tokenize::EncodeStats stats;
  EXPECT_EQ(tokenize::loadTokenizer(s.path())->encode("A", stats), (std::vector<int32_t>{1}));
}

TEST(TokenizerLoader, NothingFoundSaysWhatItLookedFor) {
  ScratchDir s;
  try {
    tokenize::loadTokenizer(s.path());
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json, vocab.json + merges.txt, vocab.txt, tokenizer.model"),
              std::string::npos);
  }
}

}  // namespace
}  // namespace posgeom::testing
