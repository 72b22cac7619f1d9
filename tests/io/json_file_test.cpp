#include "posgeom/io/json_file.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(JsonFile, InvalidJsonNamesTheFileAndByte) {
  ScratchDir s;
  writeFile(s / "config.json", "{\"a\": 1,,}");
  try {
    io::readJsonFile(s / "config.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: invalid JSON at byte"), std::string::npos) << e.what();
  }
}

TEST(JsonFile, ANumberBeyondDoubleIsABadInputNotACrash) {
  // Found by fuzzing config.json: nlohmann throws out_of_range, not parse_error, for it.
  ScratchDir s;
  writeFile(s / "config.json", "{\"layer_norm_epsilon\": 1e405}");
  try {
    io::readJsonFile(s / "config.json");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (s / "config.json").string() + ": invalid JSON: number overflow parsing '1e405'");
  }
}

// What Python's json.dump writes for inf and nan: the reader says that JSON has no such
// number, and under which key, not only where it stopped.
TEST(JsonFile, InfinityAndNanAreNamedAsNotJson) {
  ScratchDir s;
  for (const auto& [text, expected] : std::vector<std::pair<std::string, std::string>>{
           {"{\"a\": 1,\n  \"attn_logit_softcapping\": Infinity}", "key 'attn_logit_softcapping' holds Infinity, which is not JSON"},
           {"{\"rms_norm_eps\": -Infinity}", "key 'rms_norm_eps' holds -Infinity, which is not JSON"},
           {"{\"x\":NaN}", "key 'x' holds NaN, which is not JSON"},
           {"[1, NaN]", "at byte 5: NaN, which is not JSON (JSON has no Infinity or NaN"},
           {"{\"a\": ", "invalid JSON at byte"}}) {
    writeFile(s / "config.json", text);
    try {
      io::readJsonFile(s / "config.json");
      ADD_FAILURE() << text;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
    }
  }
}

TEST(JsonFile, UnreadableFile) { EXPECT_THROW(io::readJsonFile("/nonexistent/config.json"), InputError); }

TEST(JsonConfig, AliasesDefaultsAndTypes) {
  const io::JsonConfig c(nlohmann::json::parse(R"({"n_embd": 64, "eps": 1e-5, "act": "gelu", "tie": false, "n": null})"),
                         "config.json");
  EXPECT_EQ(c.requirePositiveInt({"hidden_size", "n_embd"}), 64);
  EXPECT_EQ(c.positiveInt({"n"}, 7), 7);  // null counts as absent, as in HF configs
  EXPECT_DOUBLE_EQ(c.number({"eps"}, 0), 1e-5);
  EXPECT_EQ(c.string({"act"}, ""), "gelu");
  EXPECT_FALSE(c.boolean({"tie"}, true));
  EXPECT_THROW(c.requirePositiveInt({"missing"}), InputError);
  EXPECT_THROW(c.string({"n_embd"}, ""), InputError);
  EXPECT_THROW(c.boolean({"act"}, true), InputError);
}

TEST(JsonConfig, NonPositiveSizesAreRejected) {
  const io::JsonConfig c(nlohmann::json::parse(R"({"n_layer": 0, "n_head": 2.5})"), "config.json");
  EXPECT_THROW(c.requirePositiveInt({"n_layer"}), InputError);
  EXPECT_THROW(c.requirePositiveInt({"n_head"}), InputError);
}

// 10^30 is a positive integer (Python writes it as one; nlohmann reads a double): the fault
// said is its size, not its kind.
TEST(JsonConfig, AWholeNumberPastInt64IsTooLarge) {
  const io::JsonConfig c(
      nlohmann::json::parse(R"({"a": 1000000000000000000000000000000, "b": 1e30, "c": 18446744073709551615, "d": 8.5})"),
      "config.json");
  for (const char* key : {"a", "b", "c"}) {
    try {
      c.requirePositiveInt({key});
      ADD_FAILURE() << key;
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find("too large (at most 9223372036854775807)"), std::string::npos) << e.what();
    }
  }
  try {
    c.requirePositiveInt({"d"});
    ADD_FAILURE();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("must be a positive integer"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
