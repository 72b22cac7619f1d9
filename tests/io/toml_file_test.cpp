#include "posgeom/io/toml_file.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TomlFile, TablesValuesAndOrder) {
  const auto t = io::parseToml(R"(# a sweep
out = "sweeps/x"   # trailing comment
count = 1_000
ratio = -2.5e-1
on = true

[models.gpt2]
model = 'C:\plain'
layers = [0, 2,
          4,]   # multi-line, trailing comma
[models."bert base"]
opts = {seq-len = 128, causal = true}
[corpora]
b = "\u00e9\t"
a = ""
)",
                               "t.toml");
  EXPECT_EQ(t["out"], "sweeps/x");
  EXPECT_EQ(t["count"], 1000);
  EXPECT_DOUBLE_EQ(t["ratio"].get<double>(), -0.25);
  EXPECT_EQ(t["on"], true);
  EXPECT_EQ(t["models"]["gpt2"]["model"], "C:\\plain");
  EXPECT_EQ(t["models"]["gpt2"]["layers"], nlohmann::ordered_json::parse("[0,2,4]"));
  EXPECT_EQ(t["models"]["bert base"]["opts"]["seq-len"], 128);
  EXPECT_EQ(t["corpora"]["b"], "\xc3\xa9\t");
  std::vector<std::string> order;
  for (const auto& [k, v] : t["corpora"].items()) order.push_back(k);
  EXPECT_EQ(order, (std::vector<std::string>{"b", "a"}));  // file order kept
}

TEST(TomlFile, ErrorsNameTheFileAndLine) {
  auto message = [](const std::string& text) {
    try {
      io::parseToml(text, "c.toml");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message("a = 1\nb = nope\n"), "c.toml: line 2: 'nope' is not a value (strings need quotes)");
  EXPECT_EQ(message("a = 1\na = 2\n"), "c.toml: line 2: 'a' is defined twice");
  EXPECT_EQ(message("a = \"open\n"), "c.toml: line 1: unterminated string");
  EXPECT_EQ(message("[[runs]]\n"), "c.toml: line 1: arrays of tables ([[...]]) are not supported");
  EXPECT_EQ(message("a.b = 1\n"), "c.toml: line 1: dotted keys are not supported; use a [table]");
  EXPECT_EQ(message("a = 1 2\n"), "c.toml: line 1: unexpected text after the value");
  // Found by the toml_config fuzz target: these were internal errors (std::stoul threw).
  for (const char* bad : {"a = \"\\uzz12\"\n", "a = \"\\u12\"\n", "a = \"\\u\"\n"})
    EXPECT_EQ(message(bad), "c.toml: line 1: \\u must be followed by four hex digits") << bad;
  EXPECT_EQ(io::parseToml("a = \"\\u00e9\"\n", "c.toml")["a"], "\xc3\xa9");  // é
}

TEST(TomlFile, JsonFilesReadTheSameWay) {
  ScratchDir s;
  writeFile(s / "c.json", R"({"z": 1, "a": {"k": "v"}})");
  const auto j = io::readTomlOrJsonFile(s / "c.json");
  EXPECT_EQ(j.begin().key(), "z");
  EXPECT_EQ(j["a"]["k"], "v");
  EXPECT_THROW(io::readTomlOrJsonFile(s / "missing.toml"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
