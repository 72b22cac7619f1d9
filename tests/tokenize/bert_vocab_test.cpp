#include "posgeom/tokenize/formats.h"
#include "test_support.h"
#include "tokenizer_fixtures.h"

#include <fstream>
#include <unordered_map>

namespace posgeom::testing {
namespace {

// Expected pieces are derived by hand from the WordPiece definition (normalize: clean,
// isolate CJK, strip accents, lowercase; split on whitespace and punctuation; greedy
// longest match with "##"); ids are then the pieces' line numbers in vocab.txt.
class BertWordPiece : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto path = sharedDir() / "data/tokenizers/bert-base-uncased/vocab.txt";
    if (sharedDir().empty() || !std::filesystem::exists(path)) return;
    tokenizer_ = tokenize::loadBertVocab(path, {});
    std::ifstream in(path);
    std::string line;
    for (int32_t id = 0; std::getline(in, line); ++id) ids_[line] = id;
  }
  std::vector<int32_t> idsOf(const std::vector<std::string>& pieces) {
    std::vector<int32_t> out;
    for (const auto& p : pieces) out.push_back(ids_.at(p));
    return out;
  }
  std::unique_ptr<tokenize::Tokenizer> tokenizer_;
  std::unordered_map<std::string, int32_t> ids_;
};

TEST_F(BertWordPiece, AccentsAreStrippedAndCaseLowered) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  EXPECT_EQ(encodeAll(*tokenizer_, "Café NAÏVE Résumé"), idsOf({"cafe", "naive", "resume"}));
  EXPECT_EQ(encodeAll(*tokenizer_, "Über"), idsOf({"uber"}));
}

TEST_F(BertWordPiece, CjkIdeographsStandAlone) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  EXPECT_EQ(encodeAll(*tokenizer_, "日本"), idsOf({"日", "本"}));
}

TEST_F(BertWordPiece, PunctuationSplits) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  EXPECT_EQ(encodeAll(*tokenizer_, "hello,world!"), idsOf({"hello", ",", "world", "!"}));
}

TEST_F(BertWordPiece, GreedyLongestMatchFirst) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  // "unaffable": "una" is the longest vocabulary prefix, then "##ffa", then "##ble".
  EXPECT_EQ(encodeAll(*tokenizer_, "unaffable"), idsOf({"una", "##ffa", "##ble"}));
  EXPECT_EQ(encodeAll(*tokenizer_, "playing"), idsOf({"playing"}));
}

TEST_F(BertWordPiece, UnknownAndOverlongWordsBecomeUnk) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  tokenize::EncodeStats stats;
  EXPECT_EQ(tokenizer_->encode("😀", stats), idsOf({"[UNK]"}));
  EXPECT_EQ(tokenizer_->encode(std::string(101, 'a'), stats), idsOf({"[UNK]"}));
  EXPECT_EQ(stats.unknown_tokens, 2u);
}

TEST_F(BertWordPiece, SpecialTokensInTextAndFraming) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  EXPECT_EQ(encodeAll(*tokenizer_, "[CLS] hello [SEP]"), idsOf({"[CLS]", "hello", "[SEP]"}));
  EXPECT_EQ(tokenizer_->framing().prefix, idsOf({"[CLS]"}));
  EXPECT_EQ(tokenizer_->framing().suffix, idsOf({"[SEP]"}));
}

TEST_F(BertWordPiece, InvalidUtf8IsReplacedCountedAndCleaned) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/bert-base-uncased/vocab.txt");
  tokenize::EncodeStats stats;
  // U+FFFD is removed by BERT's text cleaning, so only the words remain.
  EXPECT_EQ(tokenizer_->encode(std::string("hello \xff world"), stats), idsOf({"hello", "world"}));
  EXPECT_EQ(stats.invalid_utf8_replaced, 1u);
}

TEST(BertVocabOptions, CasedVocabularyKeepsCaseAndAccents) {
  ScratchDir s;
  writeFile(s / "vocab.txt", "[UNK]\nCafé\ncafe\n");
  const auto cased = tokenize::loadBertVocab(s / "vocab.txt", {false, std::nullopt, true});
  EXPECT_EQ(encodeAll(*cased, "Café"), (std::vector<int32_t>{1}));
  const auto uncased = tokenize::loadBertVocab(s / "vocab.txt", {});
  EXPECT_EQ(encodeAll(*uncased, "Café"), (std::vector<int32_t>{2}));
}

}  // namespace
}  // namespace posgeom::testing
