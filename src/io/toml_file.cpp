#include "posgeom/io/toml_file.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/io/whole_file.h"

namespace posgeom::io {
namespace {

class TomlParser {
 public:
  TomlParser(const std::string& text, std::string source) : text_(text), source_(std::move(source)) {}

  nlohmann::ordered_json parse() {
    nlohmann::ordered_json root = nlohmann::ordered_json::object();
    nlohmann::ordered_json* table = &root;
    while (skipBlankLines()) {
      if (peek() == '[') {
        if (at(1) == '[') fail("arrays of tables ([[...]]) are not supported");
        ++pos_;
        table = &root;
        for (bool more = true; more;) {
          skipSpaces();
          const std::string k = key();
          skipSpaces();
          nlohmann::ordered_json& next = (*table)[k];
          if (next.is_null()) next = nlohmann::ordered_json::object();
          if (!next.is_object()) fail("'" + k + "' is already a value, not a table");
          table = &next;
          more = peek() == '.';
          if (more) ++pos_;
        }
        expect(']');
      } else {
        const std::string k = key();
        skipSpaces();
        if (peek() == '.') fail("dotted keys are not supported; use a [table]");
        expect('=');
        skipSpaces();
        if (table->contains(k)) fail("'" + k + "' is defined twice");
        (*table)[k] = value();
      }
      endOfLine();
    }
    return root;
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  char at(std::size_t ahead) const { return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0'; }
  [[noreturn]] void fail(const std::string& what) const {
    std::size_t line = 1;
    for (std::size_t i = 0; i < pos_ && i < text_.size(); ++i) line += text_[i] == '\n';
    throw InputError(source_, "line " + std::to_string(line) + ": " + what);
  }
  void expect(char c) {
    if (peek() != c) fail(std::string("expected '") + c + "'");
    ++pos_;
  }
  void skipSpaces() {
    while (peek() == ' ' || peek() == '\t') ++pos_;
  }
  void skipComment() {
    if (peek() == '#')
      while (pos_ < text_.size() && peek() != '\n') ++pos_;
  }
  // Spaces, comments and newlines, also inside arrays.
  void skipWhitespace() {
    for (;;) {
      skipSpaces();
      skipComment();
      if (peek() == '\n' || peek() == '\r') {
        ++pos_;
        continue;
      }
      return;
    }
  }
  bool skipBlankLines() {
    skipWhitespace();
    return pos_ < text_.size();
  }
  void endOfLine() {
    skipSpaces();
    skipComment();
    if (pos_ < text_.size() && peek() != '\n' && peek() != '\r') fail("unexpected text after the value");
  }
  std::string key() {
    if (peek() == '"') return basicString();
    if (peek() == '\'') return literalString();
    const std::size_t start = pos_;
    while (std::isalnum(static_cast<unsigned char>(peek())) || peek() == '_' || peek() == '-') ++pos_;
    if (pos_ == start) fail("expected a key");
    return text_.substr(start, pos_ - start);
  }
  std::string literalString() {
    expect('\'');
    const auto end = text_.find('\'', pos_);
    if (end == std::string::npos || text_.find('\n', pos_) < end) fail("unterminated string");
    std::string s = text_.substr(pos_, end - pos_);
    pos_ = end + 1;
    return s;
  }
  std::string basicString() {
    expect('"');
    std::string s;
    for (;;) {
      const char c = peek();
      if (c == '\0' || c == '\n') fail("unterminated string");
      ++pos_;
      if (c == '"') return s;
      if (c != '\\') {
        s += c;
        continue;
      }
      const char e = peek();
      ++pos_;
      switch (e) {
        case '"': s += '"'; break;
        case '\\': s += '\\'; break;
        case 'n': s += '\n'; break;
        case 't': s += '\t'; break;
        case 'r': s += '\r'; break;
        case 'u': {
          // Four hex digits, checked first (found by the toml_config fuzz target: stoul threw
          // on "\u" followed by anything else, an internal error).
          const std::string digits = text_.substr(pos_, 4);
          if (digits.size() != 4 || !std::all_of(digits.begin(), digits.end(), [](char h) { return std::isxdigit(static_cast<unsigned char>(h)); }))
            fail("\\u must be followed by four hex digits");
          const unsigned long cp = std::stoul(digits, nullptr, 16);
          pos_ += 4;
          if (cp < 0x80) {
            s += static_cast<char>(cp);
          } else if (cp < 0x800) {
            s += static_cast<char>(0xC0 | (cp >> 6));
            s += static_cast<char>(0x80 | (cp & 0x3F));
          } else {
            s += static_cast<char>(0xE0 | (cp >> 12));
            s += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
            s += static_cast<char>(0x80 | (cp & 0x3F));
          }
          break;
        }
        default: fail(std::string("unknown escape \\") + e);
      }
    }
  }
  nlohmann::ordered_json value() {
    const char c = peek();
    if (c == '"') {
      if (at(1) == '"' && at(2) == '"') fail("multi-line strings are not supported");
      return basicString();
    }
    if (c == '\'') return literalString();
    if (c == '[') {
      ++pos_;
      nlohmann::ordered_json array = nlohmann::ordered_json::array();
      for (;;) {
        skipWhitespace();
        if (peek() == ']') break;
        array.push_back(value());
        skipWhitespace();
        if (peek() == ',') {
          ++pos_;
          continue;
        }
        if (peek() != ']') fail("expected ',' or ']' in the array");
      }
      ++pos_;
      return array;
    }
    if (c == '{') {
      ++pos_;
      nlohmann::ordered_json table = nlohmann::ordered_json::object();
      skipSpaces();
      while (peek() != '}') {
        const std::string k = key();
        skipSpaces();
        expect('=');
        skipSpaces();
        table[k] = value();
        skipSpaces();
        if (peek() == ',') ++pos_, skipSpaces();
        else if (peek() != '}') fail("expected ',' or '}' in the inline table");
      }
      ++pos_;
      return table;
    }
    const std::size_t start = pos_;
    while (pos_ < text_.size() && std::string(" \t\r\n,]}#").find(peek()) == std::string::npos) ++pos_;
    std::string word = text_.substr(start, pos_ - start);
    if (word == "true") return true;
    if (word == "false") return false;
    if (word == "inf" || word == "+inf") return INFINITY;
    if (word == "-inf") return -INFINITY;
    if (word == "nan" || word == "+nan" || word == "-nan") return NAN;
    std::string digits;
    for (char d : word)
      if (d != '_') digits += d;
    if (digits.empty()) fail("expected a value");
    try {
      std::size_t used = 0;
      if (digits.find_first_of(".eE") == std::string::npos) {
        const long long v = std::stoll(digits, &used, 10);
        if (used == digits.size()) return v;
      } else {
        const double v = std::stod(digits, &used);
        if (used == digits.size()) return v;
      }
    } catch (const std::exception&) {
    }
    fail("'" + word + "' is not a value (strings need quotes)");
  }

  const std::string& text_;
  std::string source_;
  std::size_t pos_ = 0;
};

}  // namespace

nlohmann::ordered_json parseToml(const std::string& text, const std::string& source) { return TomlParser(text, source).parse(); }

nlohmann::ordered_json readTomlOrJsonFile(const std::filesystem::path& path) {
  const std::string text = readWholeFile(path);
  const auto first = text.find_first_not_of(" \t\r\n");
  if (first != std::string::npos && text[first] == '{') {
    auto json = nlohmann::ordered_json::parse(text, nullptr, false);
    if (json.is_discarded() || !json.is_object()) throw InputError(path.string(), "is not a valid JSON object");
    return json;
  }
  return parseToml(text, path.string());
}

}  // namespace posgeom::io
