#include "posgeom/tokenize/bpe.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/tokenize/pre_tokenizer.h"
#include "captured_log.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;


std::vector<int32_t> encode(const BpeModel& m, const std::string& piece, EncodeStats* stats = nullptr) {
  EncodeStats local;
  std::vector<int32_t> out;
  m.encode(piece, out, stats ? *stats : local);
  return out;
}

TEST(Bpe, MergesApplyLowestRankFirst) {
  // "abc": rank 0 "b c" beats rank 1 "a b", so the result is a + bc.
  const BpeModel m({{"a", 0}, {"b", 1}, {"c", 2}, {"ab", 3}, {"bc", 4}}, {{"b", "c"}, {"a", "b"}}, {}, "t");
  EXPECT_EQ(encode(m, "abc"), (std::vector<int32_t>{0, 4}));
  EXPECT_EQ(encode(m, "ab"), (std::vector<int32_t>{3}));
  EXPECT_EQ(encode(m, "abc"), (std::vector<int32_t>{0, 4}));  // again, from the cache
}

TEST(Bpe, ByteFallbackForUnknownCharacters) {
  std::unordered_map<std::string, int32_t> vocab{{"<unk>", 0}, {"a", 1}};
  for (int b = 0; b < 256; ++b) {
    char name[8];
    std::snprintf(name, sizeof(name), "<0x%02X>", b);
    vocab[name] = 2 + b;
  }
  BpeOptions options;
  options.unk_token = "<unk>";
  options.byte_fallback = true;
  const BpeModel m(vocab, {}, options, "t");
  EXPECT_EQ(encode(m, "a\xC3\xA9"), (std::vector<int32_t>{1, 2 + 0xC3, 2 + 0xA9}));
}

TEST(Bpe, UnknownWithoutFallbackUsesUnkAndCounts) {
  BpeOptions options;
  options.unk_token = "?";
  const BpeModel m({{"?", 0}, {"a", 1}}, {}, options, "t");
  EncodeStats stats;
  EXPECT_EQ(encode(m, "ax", &stats), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(stats.unknown_tokens, 1u);
}

// Every occurrence counts, also of a piece seen before (the cache used to hide the second).
TEST(Bpe, UnknownCharactersAreCountedEveryTime) {
  BpeOptions options;
  options.unk_token = "?";
  const BpeModel m({{"?", 0}, {"a", 1}}, {}, options, "t");
  EncodeStats stats;
  encode(m, "ax", &stats);
  EXPECT_EQ(encode(m, "ax", &stats), (std::vector<int32_t>{1, 0}));
  EXPECT_EQ(stats.unknown_tokens, 2u);
}

// Without an unknown token (as Hugging Face does) they are left out of the ids, and the
// model says how many once, when it is done: a warning, the run goes on.
TEST(Bpe, CharactersDroppedForWantOfAnUnknownTokenAreWarnedOnceWithTheirCount) {
  CapturedLog log;
  {
    const BpeModel m({{"a", 0}}, {}, {}, "tokenizer.json");
    EncodeStats stats;
    EXPECT_EQ(encode(m, "axa", &stats), (std::vector<int32_t>{0, 0}));
    EXPECT_EQ(encode(m, "axa", &stats), (std::vector<int32_t>{0, 0}));
    EXPECT_EQ(encode(m, "\xC3\xA9", &stats), std::vector<int32_t>{});
    EXPECT_EQ(stats.unknown_tokens, 3u);
    EXPECT_EQ(log.str(), "");  // nothing while the text is read
  }
  const auto text = log.str();
  EXPECT_NE(text.find("[warning] tokenizer.json: 3 characters of the text read are outside the vocabulary and were dropped "
                      "from the ids: there is no unk_token"),
            std::string::npos)
      << text;
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
  {
    const BpeModel m({{"a", 0}}, {}, {}, "tokenizer.json");
    encode(m, "aaa");
  }
  EXPECT_EQ(log.str(), text);  // nothing dropped, nothing said
}

TEST(Bpe, IgnoreMergesTakesWholeWords) {
  BpeOptions options;
  options.ignore_merges = true;
  const BpeModel m({{"a", 0}, {"b", 1}, {"ab", 2}, {"abab", 3}}, {{"a", "b"}}, options, "t");
  EXPECT_EQ(encode(m, "abab"), (std::vector<int32_t>{3}));
}

TEST(Bpe, MergeWithUnknownTokenIsABadInput) {
  EXPECT_THROW(BpeModel({{"a", 0}}, {{"a", "z"}}, {}, "t"), InputError);
}

TEST(Bpe, AnEmptyVocabularyIsBadInput) { EXPECT_THROW(BpeModel({}, {}, {}, "t"), InputError); }

// Byte-level: all 256 byte symbols, or an unknown token to stand for a missing one.
TEST(Bpe, ByteLevelVocabulariesNeedEveryByteOrAnUnknownToken) {
  std::unordered_map<std::string, int32_t> all;
  for (const auto& symbol : byteToUnicode()) all.emplace(symbol, static_cast<int32_t>(all.size()));
  EXPECT_NO_THROW(BpeModel(all, {}, {}, "t").requireEveryByteSymbol("t"));
  auto missing = all;
  missing.erase(byteToUnicode()[0x41]);  // 'A'
  try {
    BpeModel(missing, {}, {}, "t").requireEveryByteSymbol("vocab.json");
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("vocab.json: the byte-level vocabulary has no token for 1 of the 256 bytes "
                                         "(the first: byte 0x41, 'A')"),
              std::string::npos)
        << e.what();
  }
  BpeOptions with_unk;
  missing.emplace("<unk>", 999);
  with_unk.unk_token = "<unk>";
  EXPECT_NO_THROW(BpeModel(missing, {}, with_unk, "t").requireEveryByteSymbol("t"));
}

}  // namespace
}  // namespace posgeom::testing
