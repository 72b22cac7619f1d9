#include "posgeom/report/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <sstream>

#include "posgeom/base/edit_distance.h"
#include "posgeom/base/error.h"
#include "posgeom/report/summary_keys.h"

namespace posgeom::report {
namespace {

std::string keyOf(const nlohmann::json& item) {
  std::string key;
  for (const char* k : {keys::kLayer, keys::kBlock, keys::kHead, keys::kFrom, keys::kTo})
    if (item.is_object() && item.contains(k)) key += (key.empty() ? "" : ",") + std::string(k) + "=" + item[k].dump();
  return key;
}

const nlohmann::json* findMatch(const nlohmann::json& array, const nlohmann::json& item, std::size_t index) {
  const auto key = keyOf(item);
  if (key.empty()) return index < array.size() ? &array[index] : nullptr;
  for (const auto& candidate : array)
    if (keyOf(candidate) == key) return &candidate;
  return nullptr;
}

const char* jsonKind(const nlohmann::json& j) {
  return j.is_array() ? "an array" : j.is_string() ? "a string" : j.is_number() ? "a number" : j.is_boolean() ? "a boolean" : "null";
}

// A value whose kind no report gives at its place (a string where the report has a number)
// is a fault of the reference, not a value that moved. null stands for an undefined number.
void requireSameKind(const nlohmann::json& ref, const nlohmann::json& actual, const std::string& path, const std::string& where) {
  const bool same = ref.is_number() ? actual.is_number() : ref.type() == actual.type();
  if (same || ref.is_null() || actual.is_null()) return;
  throw InputError(where, path + " is " + jsonKind(ref) + " (" + ref.dump().substr(0, 40) + ") where the report has " +
                              jsonKind(actual) + " (" + actual.dump().substr(0, 40) + "): the reference is malformed");
}

void walk(const nlohmann::json& ref, const nlohmann::json* actual, const std::string& path, const std::string& key,
          const CheckOptions& options, const std::string& where, std::vector<CheckRow>& rows) {
  if (ref.is_object()) {
    for (const auto& [k, v] : ref.items()) {
      const nlohmann::json* next = actual && actual->is_object() && actual->contains(k) ? &(*actual)[k] : nullptr;
      walk(v, next, path.empty() ? k : path + "." + k, k, options, where, rows);
    }
    return;
  }
  if (ref.is_array()) {
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const nlohmann::json* next = actual && actual->is_array() ? findMatch(*actual, ref[i], i) : nullptr;
      const auto item_key = keyOf(ref[i]);
      walk(ref[i], next, path + "[" + (item_key.empty() ? std::to_string(i) : item_key) + "]", key, options, where, rows);
    }
    return;
  }
  CheckRow row;
  row.path = path;
  row.reference = ref.dump();
  if (!actual || actual->is_object() || actual->is_array()) {
    row.actual = "missing";
    row.ok = false;
    rows.push_back(row);
    return;
  }
  row.actual = actual->dump();
  requireSameKind(ref, *actual, path, where);
  if (!ref.is_number() || !actual->is_number()) {  // strings (head classes), booleans, nulls: equal or moved
    row.ok = *actual == ref;
    rows.push_back(row);
    return;
  }
  const auto it = options.per_key.find(key);
  if (ref.is_number_integer() && it == options.per_key.end()) {
    row.ok = *actual == ref;
    row.abs_diff = std::abs(actual->get<double>() - ref.get<double>());
  } else {
    const Tolerance t = it == options.per_key.end() ? options.tolerance : it->second;
    const double r = ref.get<double>(), a = actual->get<double>();
    row.abs_diff = std::abs(a - r);
    row.rel_diff = r != 0 ? row.abs_diff / std::abs(r) : row.abs_diff;
    row.ok = std::isfinite(a) && row.abs_diff <= t.atol + t.rtol * std::abs(r);
  }
  row.numeric = true;
  rows.push_back(row);
}

// The keys whose values the reference pins (a tolerance can name only these).
void valueKeys(const nlohmann::json& j, const std::string& key, std::set<std::string>& keys) {
  if (j.is_object()) {
    for (const auto& [k, v] : j.items()) valueKeys(v, k, keys);
  } else if (j.is_array()) {
    for (const auto& v : j) valueKeys(v, key, keys);
  } else if (!key.empty()) {
    keys.insert(key);
  }
}

// A tolerance for a key the reference does not hold would loosen nothing: a typo, refused.
void requirePinnedKey(const std::string& key, const std::set<std::string>& keys, const std::string& where) {
  if (keys.count(key)) return;
  std::string closest;
  std::size_t best = std::string::npos;
  for (const auto& k : keys)
    if (const auto d = editDistance(key, k); d < best) best = d, closest = k;
  throw InputError(where, "the reference holds no value named '" + key + "'" +
                              (!closest.empty() && best <= std::max<std::size_t>(2, key.size() / 3) ? " (did you mean '" + closest + "'?)"
                                                                                                   : ""));
}

}  // namespace

namespace {

double toleranceValue(const nlohmann::json& t, const char* name, double fallback, const std::string& where, const std::string& key) {
  if (!t.contains(name)) return fallback;
  if (!t[name].is_number() || !(t[name].get<double>() >= 0))
    throw InputError(where, "tolerances." + key + "." + name + " must be a number >= 0 (got " + t[name].dump() + ")");
  return t[name].get<double>();
}

void checkTolerance(const Tolerance& t, const std::string& where) {
  if (!(t.rtol >= 0) || !(t.atol >= 0))
    throw InputError(where, "tolerances must be >= 0 (rtol " + std::to_string(t.rtol) + ", atol " + std::to_string(t.atol) + ")");
}

}  // namespace

std::vector<CheckRow> checkAgainstReference(const nlohmann::json& summary, const nlohmann::json& reference,
                                            const CheckOptions& options, const std::string& where) {
  if (!reference.is_object())
    throw InputError(where, std::string("is ") + jsonKind(reference) + ", not a JSON object of expected values");
  checkTolerance(options.tolerance, "--rtol/--atol");
  for (const auto& [key, t] : options.per_key) checkTolerance(t, "--tolerance " + key);
  if (reference.is_object() && reference.contains(keys::kHeads) && reference[keys::kHeads].is_array())
    for (const auto& head : reference[keys::kHeads])
      if (head.is_object() && head.contains(keys::kLayer))
        throw InputError(where, "names heads by \"layer\"; heads are named by their 0-based \"block\" now (block = layer - 1: "
                                "block b reads hidden.b and writes hidden.b+1)");
  CheckOptions merged = options;
  nlohmann::json numbers = reference;
  if (reference.contains(kReferenceTolerances)) {
    if (!reference[kReferenceTolerances].is_object()) throw InputError(where, "tolerances must be an object {key: {rtol, atol}}");
    for (const auto& [key, t] : reference[kReferenceTolerances].items()) {
      if (!t.is_object()) throw InputError(where, "tolerances." + key + " must be an object {rtol, atol}");
      const Tolerance parsed{toleranceValue(t, "rtol", options.tolerance.rtol, where, key),
                             toleranceValue(t, "atol", options.tolerance.atol, where, key)};
      if (!merged.per_key.count(key)) merged.per_key[key] = parsed;
    }
    numbers.erase(kReferenceTolerances);
  }
  numbers.erase(kReferenceDescription);
  std::set<std::string> keys;
  valueKeys(numbers, "", keys);
  // Only the command line's: a file's tolerances may cover keys that some of the references
  // sharing them leave out (batch cuts a reference down to a run's columns).
  for (const auto& [key, t] : options.per_key) requirePinnedKey(key, keys, "--tolerance " + key);
  std::vector<CheckRow> rows;
  walk(numbers, &summary, "", "", merged, where, rows);
  return rows;
}

std::string formatCheck(const std::vector<CheckRow>& rows, bool all_rows) {
  std::vector<CheckRow> shown;
  for (const auto& r : rows)
    if (all_rows || !r.ok) shown.push_back(r);
  std::stable_sort(shown.begin(), shown.end(), [](const CheckRow& a, const CheckRow& b) { return !a.ok && b.ok; });
  std::size_t width = 4;
  for (const auto& r : shown) width = std::max(width, r.path.size());
  std::ostringstream out;
  char line[512];
  std::snprintf(line, sizeof(line), "%-6s %-*s %22s %22s %10s\n", "", static_cast<int>(width), "what", "reference", "actual",
                "rel diff");
  out << line;
  for (const auto& r : shown) {
    char rel[32] = "-";  // no difference to give: a string, a boolean, null, or a missing value
    if (r.numeric) std::snprintf(rel, sizeof(rel), "%.2e", r.rel_diff);
    std::snprintf(line, sizeof(line), "%-6s %-*s %22s %22s %10s\n", r.ok ? "ok" : "MOVED", static_cast<int>(width),
                  r.path.c_str(), r.reference.substr(0, 22).c_str(), r.actual.substr(0, 22).c_str(), rel);
    out << line;
  }
  const auto moved = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const CheckRow& r) { return !r.ok; }));
  out << rows.size() - moved << " of " << rows.size() << " values within tolerance";
  if (moved) out << ", " << moved << " moved";
  out << "\n";
  return out.str();
}

}  // namespace posgeom::report
