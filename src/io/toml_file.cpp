#include "posgeom/io/toml_file.h"

// toml++ (Debian's libtomlplusplus-dev) as a header-only library, included by this file
// alone; its formatters are not used.
#define TOML_HEADER_ONLY 1
#define TOML_ENABLE_FORMATTERS 0
#include <toml++/toml.h>

#include <algorithm>
#include <cctype>
#include <string_view>
#include <utility>
#include <vector>

#include "posgeom/base/error.h"
#include "posgeom/io/whole_file.h"

namespace posgeom::io {
namespace {

using Json = nlohmann::ordered_json;

[[noreturn]] void fail(const std::string& source, const toml::source_region& at, const std::string& what) {
  throw InputError(source, "line " + std::to_string(at.begin.line) + ": " + what);
}

// ---- toml++'s document as JSON, keys in file order --------------------------------------

// The constructs that the configs never used and the reader never took: refused as before.
void refuseUnsupported(const toml::key& key, const toml::node& value, const std::string& source) {
  if (const auto* table = value.as_table(); table && !table->is_inline() && table->source().begin == key.source().begin)
    fail(source, key.source(), "dotted keys are not supported; use a [table]");  // a.b = 1 makes table a at key a
  if (const auto* array = value.as_array())
    for (const auto& element : *array)
      if (element.is_table() && !element.as_table()->is_inline())  // [[a]]: its tables are not {...}
        fail(source, array->source(), "arrays of tables ([[...]]) are not supported");
}

Json toJson(const toml::node& node, const std::string& key, const std::string& source);

// toml++ keeps a table's keys sorted; JSON gets them in the order the file names them.
Json tableToJson(const toml::table& table, const std::string& path, const std::string& source) {
  std::vector<std::pair<const toml::key*, const toml::node*>> entries;
  for (auto&& [key, value] : table) entries.emplace_back(&key, &value);
  std::sort(entries.begin(), entries.end(), [](const auto& a, const auto& b) { return a.first->source().begin < b.first->source().begin; });
  Json out = Json::object();
  for (const auto& [key, value] : entries) {
    refuseUnsupported(*key, *value, source);
    const std::string name(key->str());
    out[name] = toJson(*value, path.empty() ? name : path + "." + name, source);
  }
  return out;
}

Json toJson(const toml::node& node, const std::string& key, const std::string& source) {
  switch (node.type()) {
    case toml::node_type::table: return tableToJson(*node.as_table(), key, source);
    case toml::node_type::array: {
      Json out = Json::array();
      for (const auto& element : *node.as_array()) out.push_back(toJson(element, key, source));
      return out;
    }
    case toml::node_type::string: return node.as_string()->get();
    case toml::node_type::integer: return node.as_integer()->get();
    case toml::node_type::floating_point: return node.as_floating_point()->get();  // inf and nan too
    case toml::node_type::boolean: return node.as_boolean()->get();
    case toml::node_type::date:
    case toml::node_type::time:
    case toml::node_type::date_time:
    case toml::node_type::none: break;
  }
  fail(source, node.source(), "'" + key + "' is a date or time, which no config takes (quote it to make it a string)");
}

// ---- toml++'s parse errors in the reader's words --------------------------------------

// Line `number` (1-based) of the text, without its line break.
std::string_view lineOf(std::string_view text, std::size_t number) {
  std::size_t start = 0;
  for (std::size_t n = 1; n < number && start != std::string_view::npos; ++n) {
    start = text.find('\n', start);
    if (start != std::string_view::npos) ++start;
  }
  if (start == std::string_view::npos || start > text.size()) return {};
  auto line = text.substr(start, text.find('\n', start) - start);
  if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
  return line;
}

// The byte of `line` at toml++'s 1-based column, which counts code points; line.size() past the end.
std::size_t byteAtColumn(std::string_view line, std::size_t column) {
  std::size_t byte = 0;
  for (std::size_t c = 1; c < column && byte < line.size(); ++c)
    do ++byte;
    while (byte < line.size() && (static_cast<unsigned char>(line[byte]) & 0xC0) == 0x80);
  return byte;
}

bool endsWord(char c) { return std::isspace(static_cast<unsigned char>(c)) || std::string_view("=,[]{}#\"'").find(c) != std::string_view::npos; }

// The unquoted word at (or just before) `byte`: a string without its quotes, or "".
std::string bareWordAt(std::string_view line, std::size_t byte) {
  if ((byte >= line.size() || endsWord(line[byte])) && byte > 0) --byte;
  if (byte >= line.size() || endsWord(line[byte])) return "";
  std::size_t begin = byte, end = byte;
  while (begin > 0 && !endsWord(line[begin - 1])) --begin;
  while (end < line.size() && !endsWord(line[end])) ++end;
  const std::string word(line.substr(begin, end - begin));
  const std::size_t first = word.find_first_not_of("+-");
  if (first == std::string::npos || !std::isalpha(static_cast<unsigned char>(word[first]))) return "";
  for (const char* value : {"true", "false", "inf", "nan"})
    if (word.substr(first) == value) return "";
  return word;
}

bool startsWith(std::string_view s, std::string_view prefix) { return s.substr(0, prefix.size()) == prefix; }

// "Error while parsing <what>: <detail>" as "<what>: <detail>", on one line.
std::string plain(std::string_view description) {
  constexpr std::string_view kPrefix = "Error while parsing ";
  if (startsWith(description, kPrefix)) description.remove_prefix(kPrefix.size());
  std::string out;
  for (const char c : description) out += c == '\n' ? std::string("\\n") : std::iscntrl(static_cast<unsigned char>(c)) ? std::string(" ") : std::string(1, c);
  if (!out.empty()) out[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(out[0])));
  return out;
}

std::string describe(const toml::parse_error& error, std::string_view text) {
  const std::string_view description = error.description();
  const std::string what = plain(description);
  const auto line = lineOf(text, error.source().begin.line);
  const std::size_t byte = byteAtColumn(line, error.source().begin.column);
  const std::string scope = what.substr(0, what.find(':'));

  if (what.find("expected a comment or whitespace") != std::string::npos) return "unexpected text after the value";
  if (const auto at = what.find("cannot redefine existing "); at != std::string::npos && what.find('\'', at) != std::string::npos) {
    const auto open = what.find('\'', at), close = what.rfind('\'');
    const std::string name = what.substr(open + 1, close - open - 1);
    if (close == what.size() - 1) return "'" + name + "' is defined twice";
    if (what.substr(close) == "' as table") return "'" + name + "' is already a value, not a table";
  }
  if ((scope == "string" || scope == "literal string") && (what.find("end-of-file") != std::string::npos || byte >= line.size()))
    return "unterminated string";
  if (scope == "unicode scalar sequence" && what.find("expected hex digit") != std::string::npos) {
    const auto slash = line.substr(0, byte).rfind('\\');
    const bool eight = slash != std::string_view::npos && slash + 1 < line.size() && line[slash + 1] == 'U';
    return eight ? "\\U must be followed by eight hex digits" : "\\u must be followed by four hex digits";
  }
  // A value toml++ took for a misspelt boolean, inf or nan: most likely a string without quotes.
  if (scope == "value" || scope == "boolean" || scope == "floating-point" || scope == "integer")
    if (const auto word = bareWordAt(line, byte); !word.empty()) return "'" + word + "' is not a value (strings need quotes)";
  return what;
}

bool startsKey(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '"' || c == '\'' || c == ']'; }

std::string shown(char c) {
  if (c == '\n') return "\\n";
  const auto byte = static_cast<unsigned char>(c);
  if (std::isprint(byte)) return std::string(1, c);
  static const char* hex = "0123456789abcdef";
  return std::string("\\x") + hex[byte >> 4] + hex[byte & 0xF];
}

// toml++ 3.3 asserts, and with clang and NDEBUG has undefined behaviour, on a table header
// whose key starts with a character no key starts with ("[=", "[[[1]]]": marzer/tomlplusplus
// #294, fixed upstream by #301), found by the toml_config fuzz target. Such a line is a table
// header when the text before it is a whole document; otherwise it is inside an array or a
// multi-line string, or after an error that toml++ reports first.
void refuseHeadersWithoutKey(const std::string& text, const std::string& source) {
  std::size_t start = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0, line = 1;  // after a BOM
  auto spaces = [&](std::size_t i) {
    while (i < text.size() && (text[i] == ' ' || text[i] == '\t')) ++i;
    return i;
  };
  for (; start < text.size(); ++line) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::size_t at = spaces(start);
    if (at < end && text[at] == '[') {
      std::size_t key = spaces(at + 1);
      if (key < text.size() && text[key] == '[') key = key == at + 1 ? spaces(key + 1) : text.size();  // [[a]]; "[ [" toml++ refuses
      if (key < text.size() && !startsKey(text[key])) {
        try {
          (void)toml::parse(std::string_view(text).substr(0, start), std::string_view(source));
        } catch (const toml::parse_error&) {
          start = end + 1;
          continue;
        }
        throw InputError(source, "line " + std::to_string(line) + ": table header: expected a key, saw '" + shown(text[key]) + "'");
      }
    }
    start = end + 1;
  }
}

// The character at text[i] as it reads, or its bytes as \xHH when they are no UTF-8.
std::string characterAt(const std::string& text, std::size_t i) {
  const auto lead = static_cast<unsigned char>(text[i]);
  const std::size_t size = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC2 ? 2 : 0;
  bool valid = size > 0 && i + size <= text.size() && lead <= 0xF4;
  for (std::size_t k = 1; valid && k < size; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
  return valid ? text.substr(i, size) : shown(text[i]);
}

// toml++ 3.3 reaches __builtin_unreachable() when it asks whether some non-ASCII characters
// (U+00A1 to U+0499, U+2C5E to U+3057: 'é', '×', Greek, Cyrillic) are whitespace
// (marzer/tomlplusplus #190 and #295, fixed upstream by #305), found by the fuzz target. It
// asks outside strings and comments, where TOML takes no such character, and after a
// backslash in a multi-line basic string: both refused here first.
void refuseNonAsciiTomlPlusPlusMisreads(const std::string& text, const std::string& source) {
  std::size_t line = 1, i = text.compare(0, 3, "\xEF\xBB\xBF") == 0 ? 3 : 0;
  auto at = [&](std::size_t k) { return k < text.size() ? text[k] : '\0'; };
  auto nonAscii = [&](std::size_t k) { return static_cast<unsigned char>(at(k)) >= 0x80; };
  auto refuse = [&](const std::string& what) { throw InputError(source, "line " + std::to_string(line) + ": " + what); };
  while (i < text.size()) {
    const char c = text[i];
    if (c == '#') {
      while (i < text.size() && text[i] != '\n') ++i;
    } else if (c == '"' || c == '\'') {
      const std::string quote(at(i + 1) == c && at(i + 2) == c ? 3 : 1, c);
      const bool multi_line = quote.size() == 3;
      for (i += quote.size(); i < text.size() && (multi_line || text[i] != '\n');) {
        if (text.compare(i, quote.size(), quote) == 0) {
          i += quote.size();
          for (int extra = 0; multi_line && extra < 2 && at(i) == c; ++extra) ++i;  // """a""""" is a"" in TOML
          break;
        }
        if (c == '"' && text[i] == '\\' && multi_line) {
          std::size_t k = i + 1;
          for (; k < text.size() && std::string_view(" \t\r\n").find(text[k]) != std::string_view::npos; ++k) line += text[k] == '\n';
          if (nonAscii(k))
            refuse(k == i + 1 ? "unknown escape \\" + characterAt(text, k)
                              : "'" + characterAt(text, k) + "' right after a line-ending backslash: toml++ 3.3 cannot read it; end the line before the backslash");
          i = k == i + 1 ? k + 1 : k;
        } else {
          if (c == '"' && text[i] == '\\' && at(i + 1) != '\n') ++i;  // an escaped quote does not end the string
          line += at(i) == '\n';
          ++i;
        }
      }
    } else if (nonAscii(i)) {
      refuse("'" + characterAt(text, i) + "' outside quotes: TOML takes characters beyond ASCII only in strings and comments");
    } else {
      line += c == '\n';
      ++i;
    }
  }
}

}  // namespace

Json parseToml(const std::string& text, const std::string& source) {
  refuseNonAsciiTomlPlusPlusMisreads(text, source);
  refuseHeadersWithoutKey(text, source);
  toml::table document;
  try {
    document = toml::parse(std::string_view(text), std::string_view(source));
  } catch (const toml::parse_error& e) {
    fail(source, e.source(), describe(e, text));
  }
  return tableToJson(document, "", source);
}

Json readTomlOrJsonFile(const std::filesystem::path& path) {
  const std::string text = readWholeFile(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    auto json = Json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) throw InputError(path.string(), "is not a valid JSON object");
    return json;
  }
  return parseToml(text, path.string());
}

}  // namespace posgeom::io
