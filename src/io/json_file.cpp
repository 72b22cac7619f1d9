#include "posgeom/io/json_file.h"

#include "posgeom/base/error.h"
#include "posgeom/io/whole_file.h"

namespace posgeom::io {

std::string jsonErrorMessage(const nlohmann::json::exception& e) {
  const std::string what = e.what();
  const auto end = what.find("] ");
  return end == std::string::npos ? what : what.substr(end + 2);
}

nlohmann::json readJsonFile(const std::filesystem::path& path) {
  const std::string text = readWholeFile(path);
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw InputError(path.string(), "invalid JSON at byte " + std::to_string(e.byte));
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
