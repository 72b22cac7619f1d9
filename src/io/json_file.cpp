#include "posgeom/io/json_file.h"

#include <cctype>
#include <cmath>
#include <cstdint>

#include "posgeom/base/error.h"
#include "posgeom/io/whole_file.h"

namespace posgeom::io {

std::string jsonErrorMessage(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

namespace {

// The key whose value starts at `at` ("key": value), or "".
std::string keyBefore(const std::string& text, size_t at) {
  size_t p = at;
  auto skipSpace = [&] {
    while (p > 0 && std::isspace(static_cast<unsigned char>(text[p - 1]))) --p;
  };
  skipSpace();
  if (p == 0 || text[p - 1] != ':') return "";
  --p;
  skipSpace();
  if (p < 2 || text[p - 1] != '"') return "";
  const size_t open = text.rfind('"', p - 2);
  return open == std::string::npos ? "" : text.substr(open + 1, p - 2 - open);
}

// Python's json.dump writes inf and nan as Infinity and NaN, which are not JSON: say so
// (with the key) where the parser stopped at one, else "".
std::string nonJsonNumber(const std::string& text, size_t at) {
  if (at >= text.size()) return "";  // the end of the input
  for (const std::string word : {"Infinity", "NaN"}) {
    if (text.compare(at, word.size(), word) != 0) continue;
    const size_t start = at > 0 && text[at - 1] == '-' ? at - 1 : at;
    const auto key = keyBefore(text, start);
    return ": " + (key.empty() ? std::string() : "key '" + key + "' holds ") + text.substr(start, at - start) + word +
           ", which is not JSON (JSON has no Infinity or NaN; Python's json.dump writes them for inf and nan): "
           "give a number or null";
  }
  return "";
}

// A whole number past int64: 10^30 is read as a double, 2^64 - 1 as an unsigned. Its size,
// not its kind, is the fault.
bool beyondInt64(const nlohmann::json& v) {
  if (v.is_number_unsigned()) return v.get<uint64_t>() > uint64_t{INT64_MAX};
  return v.is_number_float() && v.get<double>() >= 0x1p63 && std::floor(v.get<double>()) == v.get<double>();
}

}  // namespace

nlohmann::json readJsonFile(const std::filesystem::path& path) {
  const std::string text = readWholeFile(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path.string(), "invalid JSON at byte " + std::to_string(e.byte) +
                                        (e.byte > 0 ? nonJsonNumber(text, e.byte - 1) : std::string()));
  } catch (const nlohmann::json::exception& e) {
    // A number beyond double (1e405) is out_of_range, not parse_error (found by fuzzing).
    throw InputError(path.string(), "invalid JSON: " + jsonErrorMessage(e));
  }
}

JsonConfig JsonConfig::load(const std::filesystem::path& path) {
  auto json = readJsonFile(path);
  if (!json.is_object()) throw InputError(path.string(), "expected a JSON object");
  return JsonConfig(std::move(json), path);
}

void JsonConfig::fail(const std::string& what) const { throw InputError(path_.string(), what); }

const nlohmann::json* JsonConfig::find(std::initializer_list<const char*> keys) const {
  for (const char* k : keys) {
    const auto it = json_.find(k);
    if (it != json_.end() && !it->is_null()) return &*it;
  }
  return nullptr;
}

std::string JsonConfig::describe(std::initializer_list<const char*> keys) {
  std::string s;
  for (const char* k : keys) s += (s.empty() ? "'" : " or '") + std::string(k) + "'";
  return s;
}

bool JsonConfig::has(const char* key) const { return find({key}) != nullptr; }

int64_t JsonConfig::requirePositiveInt(std::initializer_list<const char*> keys) const {
  const auto* v = find(keys);
  if (!v) fail("missing key " + describe(keys));
  if (beyondInt64(*v))
    fail("key " + describe(keys) + " is " + v->dump() + ", too large (at most " + std::to_string(INT64_MAX) + ")");
  if (!v->is_number_integer() || v->get<int64_t>() <= 0) fail("key " + describe(keys) + " must be a positive integer");
  return v->get<int64_t>();
}

int64_t JsonConfig::positiveInt(std::initializer_list<const char*> keys, int64_t fallback) const {
  return find(keys) ? requirePositiveInt(keys) : fallback;
}

double JsonConfig::requireNumber(std::initializer_list<const char*> keys) const {
  const auto* v = find(keys);
  if (!v) fail("missing key " + describe(keys));
  if (!v->is_number()) fail("key " + describe(keys) + " must be a number");
  return v->get<double>();
}

double JsonConfig::number(std::initializer_list<const char*> keys, double fallback) const {
  return find(keys) ? requireNumber(keys) : fallback;
}

std::string JsonConfig::string(std::initializer_list<const char*> keys, const std::string& fallback) const {
  const auto* v = find(keys);
  if (!v) return fallback;
  if (!v->is_string()) fail("key " + describe(keys) + " must be a string");
  return v->get<std::string>();
}

bool JsonConfig::boolean(std::initializer_list<const char*> keys, bool fallback) const {
  const auto* v = find(keys);
  if (!v) return fallback;
  if (!v->is_boolean()) fail("key " + describe(keys) + " must be true or false");
  return v->get<bool>();
}

}  // namespace posgeom::io
