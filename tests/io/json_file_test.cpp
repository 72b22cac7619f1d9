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

}  // namespace
}  // namespace posgeom::testing
