#include "posgeom/io/toml_file.h"

#include <cmath>
#include <cstdint>
#include <filesystem>

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

std::string tomlErrorOf(const std::string& text) {
  try {
    io::parseToml(text, "c.toml");
  } catch (const InputError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TomlFile, MoreErrorsInTheReadersWords) {
  EXPECT_EQ(tomlErrorOf("[a]\nx = 1\n[a]\n"), "c.toml: line 3: 'a' is defined twice");
  EXPECT_EQ(tomlErrorOf("t = {x = 1, x = 2}\n"), "c.toml: line 1: 'x' is defined twice");
  EXPECT_EQ(tomlErrorOf("x = 1\n[x]\n"), "c.toml: line 2: 'x' is already a value, not a table");
  EXPECT_EQ(tomlErrorOf("a = 'open\nb = 1\n"), "c.toml: line 1: unterminated string");
  EXPECT_EQ(tomlErrorOf("a = \"open"), "c.toml: line 1: unterminated string");
  EXPECT_EQ(tomlErrorOf("a = \"\\U0001F6\"\n"), "c.toml: line 1: \\U must be followed by eight hex digits");
  EXPECT_EQ(tomlErrorOf("a = [1, nope]\n"), "c.toml: line 1: 'nope' is not a value (strings need quotes)");
  EXPECT_EQ(tomlErrorOf("a = {x = -nope}\n"), "c.toml: line 1: '-nope' is not a value (strings need quotes)");
  EXPECT_EQ(tomlErrorOf("a = n\n"), "c.toml: line 1: 'n' is not a value (strings need quotes)");
  EXPECT_EQ(tomlErrorOf("a = hello world\n"), "c.toml: line 1: 'hello' is not a value (strings need quotes)");
  EXPECT_EQ(tomlErrorOf("[a] x\n"), "c.toml: line 1: unexpected text after the value");
  EXPECT_EQ(tomlErrorOf("t = {a.b = 1}\n"), "c.toml: line 1: dotted keys are not supported; use a [table]");
  EXPECT_EQ(tomlErrorOf("a = 1\n[b]\n[[b.runs]]\n"), "c.toml: line 3: arrays of tables ([[...]]) are not supported");
}

TEST(TomlFile, TableHeadersWithoutAKeyAreRefusedBeforeTomlPlusPlusSeesThem) {
  // toml++ 3.3 asserts on these (undefined behaviour with NDEBUG under clang): found by the fuzz target.
  EXPECT_EQ(tomlErrorOf("[=\n"), "c.toml: line 1: table header: expected a key, saw '='");
  EXPECT_EQ(tomlErrorOf("a = 1\n\n[[[1]]]\n"), "c.toml: line 3: table header: expected a key, saw '['");
  EXPECT_EQ(tomlErrorOf("\xEF\xBB\xBF[ \n"), "c.toml: line 1: table header: expected a key, saw '\\n'");
  EXPECT_EQ(tomlErrorOf("[a]\n  [[ &]]\n"), "c.toml: line 2: table header: expected a key, saw '&'");
  // The same text inside a value is no header; after an earlier error, that error is said.
  EXPECT_EQ(io::parseToml("s = \"\"\"\n[ = x\n\"\"\"\n", "c.toml")["s"], "[ = x\n");
  EXPECT_EQ(tomlErrorOf("a = nope\n[=\n"), "c.toml: line 1: 'nope' is not a value (strings need quotes)");
  EXPECT_EQ(tomlErrorOf("a = [\n[=]]\n"), "c.toml: line 2: value: could not determine value type");
}

TEST(TomlFile, NonAsciiWhereTomlPlusPlusWouldMisreadItIsRefused) {
  // toml++ 3.3 reaches __builtin_unreachable() on these (é, ×, §): found by the fuzz target.
  EXPECT_EQ(tomlErrorOf("cl\xc3\xa9 = 1\n"), "c.toml: line 1: '\xc3\xa9' outside quotes: TOML takes characters beyond ASCII only in strings and comments");
  EXPECT_EQ(tomlErrorOf("a = 1\nb = 2\xc3\x97" "3\n"), "c.toml: line 2: '\xc3\x97' outside quotes: TOML takes characters beyond ASCII only in strings and comments");
  EXPECT_EQ(tomlErrorOf("a = 1\n\xff\n"), "c.toml: line 2: '\\xff' outside quotes: TOML takes characters beyond ASCII only in strings and comments");
  EXPECT_EQ(tomlErrorOf("s = \"\"\"\\\n\xc2\xa7\"\"\"\n"),
            "c.toml: line 2: '\xc2\xa7' right after a line-ending backslash: toml++ 3.3 cannot read it; end the line before the backslash");
  EXPECT_EQ(tomlErrorOf("s = \"\"\"\\\xc3\xa9\"\"\"\n"), "c.toml: line 1: unknown escape \\\xc3\xa9");
  // Anywhere else it is read as it is.
  const auto t = io::parseToml("# \xc3\xa9 \xc3\x97 \xce\xa9\ns = \"\xc3\xa9\\\"\xc3\x97\"\nt = '''\n\xce\xa9'''\nu = \"\"\"a\\\n  b \xc3\xa9\"\"\"\"\"\n"
                               "[\"cl\xc3\xa9\"]\nx = 1 # \xc3\xa9\n",
                               "c.toml");
  EXPECT_EQ(t["s"], "\xc3\xa9\"\xc3\x97");
  EXPECT_EQ(t["t"], "\xce\xa9");
  EXPECT_EQ(t["u"], "ab \xc3\xa9\"\"");
  EXPECT_EQ(t["cl\xc3\xa9"]["x"], 1);
}

TEST(TomlFile, OtherErrorsAreOneLineWithTheLine) {
  // toml++'s own words ("Error while parsing <what>: ..." as "<what>: ..."), on one line.
  EXPECT_EQ(tomlErrorOf("a = 1\n\n[b\n"), "c.toml: line 3: table header: expected ']', saw '\\n'");
  EXPECT_EQ(tomlErrorOf("a = 99999999999999999999\n"),
            "c.toml: line 1: decimal integer: '99999999999999999999' is not representable in 64 bits");
  for (const std::string bad : {"a = [\n 1,\n nope,\n]\n", "\n\nx = \"\x01\"\n", "\n\n x = \"\xff\"\n", "\n\na = 1.2.3\n", "\n\n= 1\n"}) {
    const auto message = tomlErrorOf(bad);
    EXPECT_EQ(message.rfind("c.toml: line 3: ", 0), 0u) << message;
    EXPECT_EQ(message.find('\n'), std::string::npos) << message;
  }
}

TEST(TomlFile, DatesAreRefusedByKeyAndInfNanKept) {
  EXPECT_EQ(tomlErrorOf("[run]\nseed = 1\nwhen = 2024-01-01\n"),
            "c.toml: line 3: 'run.when' is a date or time, which no config takes (quote it to make it a string)");
  EXPECT_EQ(tomlErrorOf("at = [07:32:00]\n"), "c.toml: line 1: 'at' is a date or time, which no config takes (quote it to make it a string)");
  const auto t = io::parseToml("a = inf\nb = -inf\nc = nan\nd = +nan\n", "c.toml");
  EXPECT_TRUE(std::isinf(t["a"].get<double>()) && t["a"].get<double>() > 0);
  EXPECT_TRUE(std::isinf(t["b"].get<double>()) && t["b"].get<double>() < 0);
  EXPECT_TRUE(std::isnan(t["c"].get<double>()));
  EXPECT_TRUE(std::isnan(t["d"].get<double>()));
}

TEST(TomlFile, TomlBeyondWhatTheHandWrittenReaderTook) {
  const auto t = io::parseToml(R"(s = """
one
two"""
r = '''C:\x'''
h = 0x1F
o = 0o17
b = 0b101
big = 9223372036854775807
f = 1e3
u = "\U0001F600"
[a]
[a.b]
x = 1
[c]
[a.d]
y = 2
)",
                               "c.toml");
  EXPECT_EQ(t["s"], "one\ntwo");
  EXPECT_EQ(t["r"], "C:\\x");
  EXPECT_EQ(t["h"], 31);
  EXPECT_EQ(t["o"], 15);
  EXPECT_EQ(t["b"], 5);
  EXPECT_EQ(t["big"].get<std::int64_t>(), INT64_MAX);
  EXPECT_EQ(t["f"], 1000.0);
  EXPECT_EQ(t["u"], "\xf0\x9f\x98\x80");
  // File order at every level, also for a table continued after another one.
  EXPECT_EQ(t.dump(), nlohmann::ordered_json::parse(R"({"s": "one\ntwo", "r": "C:\\x", "h": 31, "o": 15, "b": 5,
    "big": 9223372036854775807, "f": 1000.0, "u": "\ud83d\ude00", "a": {"b": {"x": 1}, "d": {"y": 2}}, "c": {}})")
                          .dump());
}

// Every TOML config the project ships reads as Python's tomllib reads it, key order too.
// tests/fixtures/toml/configs.json was written once, in the source directory, by
//   python3 -c 'import glob, json, tomllib; print(json.dumps({p: tomllib.load(open(p, "rb"))
//     for p in sorted(glob.glob("configs/*.toml") + glob.glob("configs/train/*.toml"))}, indent=1))'
TEST(TomlFile, ShippedConfigsReadAsTomllibReadsThem) {
  namespace fs = std::filesystem;
  const fs::path source(POSGEOM_SOURCE_DIR);
  const auto expected = nlohmann::ordered_json::parse(readFile(source / "tests/fixtures/toml/configs.json"));
  std::size_t configs = 0;
  for (const char* dir : {"configs", "configs/train"})
    for (const auto& entry : fs::directory_iterator(source / dir)) {
      if (entry.path().extension() != ".toml") continue;
      const auto name = fs::relative(entry.path(), source).generic_string();
      ++configs;
      ASSERT_TRUE(expected.contains(name)) << name << " is new or renamed: rewrite configs.json with the command above";
      EXPECT_EQ(io::readTomlOrJsonFile(entry.path()), expected[name]) << name;
    }
  EXPECT_EQ(configs, expected.size()) << "configs.json names a config that is gone";
  EXPECT_GE(configs, 13u);
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
