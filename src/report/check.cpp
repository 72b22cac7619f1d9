#include "posgeom/report/check.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "posgeom/base/error.h"

namespace posgeom::report {
namespace {

std::string keyOf(const nlohmann::json& item) {
  std::string key;
  for (const char* k : {"layer", "block", "head", "from", "to"})
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

void walk(const nlohmann::json& ref, const nlohmann::json* actual, const std::string& path, const std::string& key,
          const CheckOptions& options, std::vector<CheckRow>& rows) {
  if (ref.is_object()) {
    for (const auto& [k, v] : ref.items()) {
      const nlohmann::json* next = actual && actual->is_object() && actual->contains(k) ? &(*actual)[k] : nullptr;
      walk(v, next, path.empty() ? k : path + "." + k, k, options, rows);
    }
    return;
  }
  if (ref.is_array()) {
    for (std::size_t i = 0; i < ref.size(); ++i) {
      const nlohmann::json* next = actual && actual->is_array() ? findMatch(*actual, ref[i], i) : nullptr;
      const auto item_key = keyOf(ref[i]);
      walk(ref[i], next, path + "[" + (item_key.empty() ? std::to_string(i) : item_key) + "]", key, options, rows);
    }
    return;
  }
  if (!ref.is_number() && !ref.is_boolean()) return;  // strings describe, numbers are checked
  CheckRow row;
  row.path = path;
  row.reference = ref.dump();
  if (!actual || (!actual->is_number() && !actual->is_boolean())) {
    row.actual = "missing";
    row.ok = false;
    rows.push_back(row);
    return;
  }
  row.actual = actual->dump();
  const auto it = options.per_key.find(key);
  if (ref.is_boolean() || (ref.is_number_integer() && it == options.per_key.end())) {
    row.ok = *actual == ref;
    if (actual->is_number()) row.abs_diff = std::abs(actual->get<double>() - ref.get<double>());
  } else {
    const Tolerance t = it == options.per_key.end() ? options.tolerance : it->second;
    const double r = ref.get<double>(), a = actual->get<double>();
    row.abs_diff = std::abs(a - r);
    row.rel_diff = r != 0 ? row.abs_diff / std::abs(r) : row.abs_diff;
    row.ok = std::isfinite(a) && row.abs_diff <= t.atol + t.rtol * std::abs(r);
  }
  rows.push_back(row);
}

}  // namespace

std::vector<CheckRow> checkAgainstReference(const nlohmann::json& summary, const nlohmann::json& reference,
                                            const CheckOptions& options, const std::string& where) {
  if (reference.is_object() && reference.contains("heads") && reference["heads"].is_array())
    for (const auto& head : reference["heads"])
      if (head.is_object() && head.contains("layer"))
        throw InputError(where, "names heads by \"layer\"; heads are named by their 0-based \"block\" now (block = layer - 1: "
                                "block b reads hidden.b and writes hidden.b+1)");
  CheckOptions merged = options;
  nlohmann::json numbers = reference;
  if (reference.is_object() && reference.contains("tolerances")) {
    for (const auto& [key, t] : reference["tolerances"].items())
      if (!merged.per_key.count(key))
        merged.per_key[key] = {t.value("rtol", options.tolerance.rtol), t.value("atol", options.tolerance.atol)};
    numbers.erase("tolerances");
  }
  std::vector<CheckRow> rows;
  walk(numbers, &summary, "", "", merged, rows);
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
    std::snprintf(line, sizeof(line), "%-6s %-*s %22s %22s %10.2e\n", r.ok ? "ok" : "MOVED", static_cast<int>(width),
                  r.path.c_str(), r.reference.substr(0, 22).c_str(), r.actual.substr(0, 22).c_str(), r.rel_diff);
    out << line;
  }
  const auto moved = static_cast<std::size_t>(std::count_if(rows.begin(), rows.end(), [](const CheckRow& r) { return !r.ok; }));
  out << rows.size() - moved << " of " << rows.size() << " numbers within tolerance";
  if (moved) out << ", " << moved << " moved";
  out << "\n";
  return out.str();
}

}  // namespace posgeom::report
