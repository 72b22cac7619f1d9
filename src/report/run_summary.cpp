#include "posgeom/report/run_summary.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "posgeom/io/json_file.h"

namespace posgeom::report {

const nlohmann::json* SummaryRow::find(const char* key) const {
  return values && values->is_object() && values->contains(key) ? &(*values)[key] : nullptr;
}

double SummaryRow::number(const char* key) const {
  const auto* v = find(key);
  return v && v->is_number() ? v->get<double>() : NAN;
}

RunSummary::RunSummary(nlohmann::json json, std::string where) : json_(std::move(json)), where_(std::move(where)) {}

RunSummary RunSummary::read(const std::filesystem::path& path) { return RunSummary(io::readJsonFile(path), path.string()); }

const nlohmann::json* RunSummary::find(const char* key) const {
  return json_.is_object() && json_.contains(key) ? &json_[key] : nullptr;
}

std::string RunSummary::text(const char* key) const { return json_.value(key, ""); }

std::string RunSummary::title() const { return json_.value(keys::kModel, json_.value(keys::kSource, std::string("analysis"))); }

const nlohmann::json& RunSummary::required(const char* key) const {
  const auto* v = find(key);
  if (!v || !v->is_array()) throw InputError(where_, std::string("has no \"") + key + "\" list: not a posgeom report's summary");
  return *v;
}

const nlohmann::json& RunSummary::requiredIn(const nlohmann::json& row, const char* list, std::size_t index, const char* key,
                                             bool text) const {
  const std::string item = std::string(list) + "[" + std::to_string(index) + "]";
  if (!row.is_object() || !row.contains(key) || row[key].is_null()) throw InputError(where_, item + " has no \"" + key + "\"");
  const auto& v = row[key];
  if (text ? !v.is_string() : !v.is_number())
    throw InputError(where_, item + "." + key + " is " + v.dump() + ", not a " + (text ? "string" : "number"));
  return v;
}

std::vector<LayerRow> RunSummary::layers() const {
  const auto& rows = required(keys::kLayers);
  std::vector<LayerRow> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    LayerRow row;
    row.values = &rows[i];
    row.layer = requiredIn(rows[i], keys::kLayers, i, keys::kLayer, false).get<int64_t>();
    out.push_back(row);
  }
  return out;
}

std::vector<CrossLayerRow> RunSummary::crossLayer() const {
  const auto& rows = required(keys::kCrossLayer);
  std::vector<CrossLayerRow> out;
  for (std::size_t i = 0; i < rows.size(); ++i)
    out.push_back({requiredIn(rows[i], keys::kCrossLayer, i, keys::kTo, false).get<double>(),
                   requiredIn(rows[i], keys::kCrossLayer, i, keys::kBasisCosine, false).get<double>()});
  return out;
}

bool RunSummary::hasHeads() const { return find(keys::kHeads) != nullptr; }

std::vector<HeadRow> RunSummary::heads() const {
  if (!hasHeads()) return {};
  const auto& rows = required(keys::kHeads);
  std::vector<HeadRow> out;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    HeadRow row;
    row.values = &rows[i];
    row.block = requiredIn(rows[i], keys::kHeads, i, keys::kBlock, false).get<int64_t>();
    row.kind = kindAt(rows, i);
    out.push_back(row);
  }
  return out;
}

std::vector<std::optional<heads::HeadKind>> RunSummary::headKinds() const {
  if (!hasHeads()) return {};
  const auto& rows = required(keys::kHeads);
  std::vector<std::optional<heads::HeadKind>> out;
  for (std::size_t i = 0; i < rows.size(); ++i) out.push_back(kindAt(rows, i));
  return out;
}

std::optional<heads::HeadKind> RunSummary::kindAt(const nlohmann::json& rows, std::size_t i) const {
  return heads::parseHeadKind(requiredIn(rows[i], keys::kHeads, i, keys::kClass, true).get<std::string>());
}

}  // namespace posgeom::report
