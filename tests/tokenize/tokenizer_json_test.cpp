#include <sentencepiece_processor.h>

#include <fstream>
#include <map>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"
#include "posgeom/tokenize/formats.h"
#include "test_support.h"
#include "tokenizer_fixtures.h"

namespace posgeom::testing {
namespace {
using nlohmann::json;
namespace fs = std::filesystem;

// A tokenizer.json for the GPT-2 vocabulary, written the way Hugging Face lays it out.
json gpt2TokenizerJson() {
  const auto dir = sharedDir() / "data/tokenizers/gpt2";
  json merges = json::array();
  std::ifstream in(dir / "merges.txt");
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line.rfind("#version", 0) != 0) merges.push_back(line);
  return {{"version", "1.0"},
          {"added_tokens", {{{"id", 50256}, {"content", "<|endoftext|>"}, {"special", true}}}},
          {"normalizer", nullptr},
          {"pre_tokenizer", {{"type", "ByteLevel"}, {"add_prefix_space", false}, {"trim_offsets", true}, {"use_regex", true}}},
          {"post_processor", {{"type", "ByteLevel"}}},
          {"model",
           {{"type", "BPE"}, {"dropout", nullptr}, {"unk_token", nullptr}, {"continuing_subword_prefix", ""},
            {"end_of_word_suffix", ""}, {"fuse_unk", false}, {"byte_fallback", false},
            {"vocab", io::readJsonFile(dir / "vocab.json")}, {"merges", merges}}}};
}

TEST(TokenizerJson, Gpt2RoundTripGivesTheLegacyIds) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "tokenizer.json", gpt2TokenizerJson().dump());
  const auto from_json = tokenize::loadTokenizerJson(s / "tokenizer.json");
  const auto dir = sharedDir() / "data/tokenizers/gpt2";
  const auto legacy = tokenize::loadGpt2Files(dir / "vocab.json", dir / "merges.txt");
  for (const auto& c : tokenizerCases("gpt2_expected.json")) EXPECT_EQ(encodeAll(*from_json, c.text), c.ids) << c.text;
  const auto shakespeare = readFile(sharedDir() / "data/corpora/tinyshakespeare.txt").substr(0, 20000);
  EXPECT_EQ(encodeAll(*from_json, shakespeare), encodeAll(*legacy, shakespeare));
  EXPECT_EQ(from_json->vocabSize(), legacy->vocabSize());
}

// Builds the Llama-2 tokenizer.json as Hugging Face's converter does from tokenizer.model:
// the vocabulary with scores, merges of every split of a piece into two pieces ordered by
// the merged piece's score, a Prepend/Replace normalizer and byte fallback.
json llamaTokenizerJson(const fs::path& model) {
  sentencepiece::SentencePieceProcessor sp;
  EXPECT_TRUE(sp.Load(model.string()).ok());
  json vocab = json::object();
  std::map<std::string, int> ids;
  for (int i = 0; i < sp.GetPieceSize(); ++i) {
    vocab[sp.IdToPiece(i)] = i;
    ids[sp.IdToPiece(i)] = i;
  }
  struct Merge {
    std::string left, right;
    float score;
    int left_id, right_id;
  };
  std::vector<Merge> merges;
  for (int i = 0; i < sp.GetPieceSize(); ++i) {
    const std::string piece = sp.IdToPiece(i);
    std::vector<Merge> local;
    for (std::size_t k = 1; k < piece.size(); ++k) {
      if ((static_cast<unsigned char>(piece[k]) & 0xC0) == 0x80) continue;  // split only between characters
      const auto l = ids.find(piece.substr(0, k)), r = ids.find(piece.substr(k));
      if (l != ids.end() && r != ids.end()) local.push_back({l->first, r->first, sp.GetScore(i), l->second, r->second});
    }
    std::sort(local.begin(), local.end(), [](const Merge& a, const Merge& b) {
      return std::tie(a.left_id, a.right_id) < std::tie(b.left_id, b.right_id);
    });
    merges.insert(merges.end(), local.begin(), local.end());
  }
  std::stable_sort(merges.begin(), merges.end(), [](const Merge& a, const Merge& b) { return a.score > b.score; });
  json merge_list = json::array();
  for (const auto& m : merges) merge_list.push_back(m.left + " " + m.right);
  return {{"added_tokens", {{{"id", 0}, {"content", "<unk>"}, {"special", true}},
                            {{"id", 1}, {"content", "<s>"}, {"special", true}},
                            {{"id", 2}, {"content", "</s>"}, {"special", true}}}},
          {"normalizer", {{"type", "Sequence"}, {"normalizers", {{{"type", "Prepend"}, {"prepend", "\xE2\x96\x81"}},
                                                                 {{"type", "Replace"}, {"pattern", {{"String", " "}}}, {"content", "\xE2\x96\x81"}}}}}},
          {"pre_tokenizer", nullptr},
          {"post_processor",
           {{"type", "TemplateProcessing"},
            {"single", {{{"SpecialToken", {{"id", "<s>"}, {"type_id", 0}}}}, {{"Sequence", {{"id", "A"}, {"type_id", 0}}}}}},
            {"special_tokens", {{"<s>", {{"id", "<s>"}, {"ids", {1}}, {"tokens", {"<s>"}}}}}}}},
          {"model", {{"type", "BPE"}, {"unk_token", "<unk>"}, {"byte_fallback", true}, {"fuse_unk", true},
                     {"vocab", vocab}, {"merges", merge_list}}}};
}

TEST(TokenizerJson, LlamaBpeWithByteFallbackMatchesSentencePiece) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/llama2/tokenizer.model");
  ScratchDir s;
  writeFile(s / "tokenizer.json", llamaTokenizerJson(sharedDir() / "data/tokenizers/llama2/tokenizer.model").dump());
  const auto tokenizer = tokenize::loadTokenizerJson(s / "tokenizer.json");
  for (const auto& c : tokenizerCases("llama2_expected.json")) EXPECT_EQ(encodeAll(*tokenizer, c.text), c.ids) << c.text;
  EXPECT_EQ(tokenizer->framing().prefix, (std::vector<int32_t>{1}));
}

TEST(TokenizerJson, WordPieceWithBertComponents) {
  ScratchDir s;
  const auto j = json::parse(R"({
    "normalizer": {"type": "BertNormalizer", "lowercase": true, "strip_accents": null, "clean_text": true,
                   "handle_chinese_chars": true},
    "pre_tokenizer": {"type": "BertPreTokenizer"},
    "post_processor": {"type": "BertProcessing", "cls": ["[CLS]", 2], "sep": ["[SEP]", 3]},
    "model": {"type": "WordPiece", "unk_token": "[UNK]", "continuing_subword_prefix": "##",
              "vocab": {"[UNK]": 0, "play": 1, "[CLS]": 2, "[SEP]": 3, "##ing": 4, "!": 5}}})");
  writeFile(s / "tokenizer.json", j.dump());
  const auto t = tokenize::loadTokenizerJson(s / "tokenizer.json");
  EXPECT_EQ(encodeAll(*t, "PLAYING! Pläy"), (std::vector<int32_t>{1, 4, 5, 1}));
  EXPECT_EQ(t->framing().prefix, (std::vector<int32_t>{2}));
  EXPECT_EQ(t->framing().suffix, (std::vector<int32_t>{3}));
}

TEST(TokenizerJson, UnsupportedComponentsAreNamed) {
  ScratchDir s;
  writeFile(s / "tokenizer.json", R"({"model": {"type": "Unigram", "vocab": []}})");
  try {
    tokenize::loadTokenizerJson(s / "tokenizer.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("tokenizer.json: unsupported model type 'Unigram'"), std::string::npos);
  }
  writeFile(s / "tokenizer.json", R"({"normalizer": {"type": "Precompiled"}, "model": {"type": "BPE", "vocab": {}, "merges": []}})");
  EXPECT_THROW(tokenize::loadTokenizerJson(s / "tokenizer.json"), InputError);
  writeFile(s / "tokenizer.json", R"({"model": {"type": "BPE", "vocab": {"a": 0}, "merges": ["a b"]}})");
  EXPECT_THROW(tokenize::loadTokenizerJson(s / "tokenizer.json"), InputError);
}

TEST(TokenizerJson, ValuesOfTheWrongKindAreABadInputNotACrash) {
  // Found by fuzzing: a post-processor's special_tokens that is not an object made
  // nlohmann throw type_error, which left as an internal error (exit 3).
  ScratchDir s;
  const auto file = s / "tokenizer.json";
  writeFile(file, R"({"model": {"type": "WordPiece", "unk_token": "[UNK]", "vocab": {"[UNK]": 0, "[CLS]": 1}},
    "post_processor": {"type": "TemplateProcessing", "single": [{"SpecialToken": {"id": "[CLS]", "type_id": 0}}],
                       "special_tokens": {"[CLS]": null}}})");
  try {
    tokenize::loadTokenizerJson(file);
    FAIL() << "must be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()).rfind(file.string() + ": not a tokenizer.json posgeom can read: ", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
