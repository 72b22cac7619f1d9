#include "posgeom/jobs/sweep_config.h"

#include <algorithm>
#include <map>

#include "posgeom/base/edit_distance.h"
#include "posgeom/base/error.h"
#include "posgeom/io/toml_file.h"
#include "posgeom/jobs/checkpoint_series.h"
#include "posgeom/report/summary_keys.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::ordered_json;

const std::vector<std::string> kDefaultColumns{report::keys::kScreenotRank, report::keys::kStableRank, report::keys::kRelativeNorm,
                                               report::keys::kContextSimilarity};

// A value as JSON text for a message; bytes that are not UTF-8 (a key may hold any) as U+FFFD.
std::string jsonText(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

// The option a misspelt key most likely meant (seq_len: seq-len; modell: model), or "".
std::string nearestOption(const std::string& key, const OptionCatalog& catalog) {
  std::string dashed = key;
  std::replace(dashed.begin(), dashed.end(), '_', '-');
  std::string best;
  std::size_t best_distance = 3;  // at most two edits away
  for (const auto& entry : catalog)
    if (const auto d = editDistance(dashed, entry.first); d < best_distance) best = entry.first, best_distance = d;
  return best;
}

// A key of a table, checked against analyze's options here, where the file, the table and
// the key are known (CLI11 would say "The following arguments were not expected: 3 --seq_len").
void checkAnalyzeKey(const std::string& key, const Json& value, const std::string& at, const OptionCatalog& catalog) {
  if (catalog.empty()) return;
  const auto it = catalog.find(key);
  if (it == catalog.end()) {
    if (key == "config") throw InputError(at, "is not an analyze option: a sweep's tables hold the runs' options themselves");
    const auto near = nearestOption(key, catalog);
    throw InputError(at, "is not an analyze option" + (near.empty() ? std::string() : " (did you mean " + near + "?)"));
  }
  const bool flag = it->second;
  if (flag && !value.is_boolean()) throw InputError(at, "is a flag: true or false (got " + jsonText(value) + ")");
  if (!flag && value.is_boolean()) throw InputError(at, "takes a value, not " + jsonText(value));
}

// A run's directory is named after its model, corpus and variant, so each name must be a
// plain directory name: nothing may write outside out.
void checkPlainName(const std::string& name, const std::string& where) {
  const bool control = std::any_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20 || c == 0x7f; });
  if (name.empty() || name.front() == '.' || name.find_first_of("/\\") != std::string::npos || control)
    throw InputError(where, "is not a plain directory name, and it names the run's directory in out (no '/' or '\\', "
                            "no leading '.', no control characters)");
}

bool isRelativePath(const std::string& v) { return v.rfind("./", 0) == 0 || v.rfind("../", 0) == 0; }

std::string optionValue(const Json& v, const fs::path& base, const std::string& where) {
  if (v.is_string()) {
    const auto s = v.get<std::string>();
    return isRelativePath(s) ? (base / s).lexically_normal().string() : s;
  }
  if (v.is_number()) return v.dump();
  if (v.is_array()) {
    std::string joined;
    for (const auto& item : v) joined += (joined.empty() ? "" : ",") + optionValue(item, base, where);
    return joined;
  }
  throw InputError(where, "values must be strings, numbers, booleans or arrays of them");
}

// A table's analyze options and its sweep keys (table-columns, table-layers).
struct OptionTable {
  std::vector<std::pair<std::string, std::string>> options;
  std::optional<std::vector<std::string>> columns;
  std::optional<std::vector<int64_t>> layers;
  std::string layers_key;  // "<file>: [models.x].table-layers"
};

OptionTable readTable(const Json& table, const fs::path& base, const std::string& where, const OptionCatalog& catalog) {
  if (!table.is_object()) throw InputError(where, "must be a table of analyze options");
  OptionTable t;
  for (const auto& [key, value] : table.items()) {
    const std::string at = where + "." + key;
    // Each element checked before it is converted (found by the toml_config fuzz target: a
    // string among the layers was an internal error, a float one undefined behaviour).
    if (key == "table-columns") {
      if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_string(); }))
        throw InputError(at, "must be an array of column names");
      t.columns = value.get<std::vector<std::string>>();
      for (const auto& column : *t.columns)
        if (std::find(tableColumnNames().begin(), tableColumnNames().end(), column) == tableColumnNames().end())
          throw InputError(at, "'" + column + "' is not a column (" + joined(tableColumnNames()) + ")");
    } else if (key == "table-layers") {
      if (!value.is_array() || !std::all_of(value.begin(), value.end(), [](const Json& v) { return v.is_number_integer(); }))
        throw InputError(at, "must be an array of layer indices");
      t.layers = value.get<std::vector<int64_t>>();
      for (const auto layer : *t.layers)
        if (layer < 0) throw InputError(at, std::to_string(layer) + " is not a layer (hidden states are numbered from 0)");
      t.layers_key = at;
    } else if (key.rfind("table-", 0) == 0) {
      throw InputError(at, "unknown sweep key (table-columns, table-layers)");
    } else if (key == "out" || key == "shard") {
      throw InputError(at, "is set by the sweep for each run");
    } else {
      checkAnalyzeKey(key, value, at, catalog);
      if (value.is_object()) throw InputError(at, "nested tables are not analyze options");
      if (!value.is_boolean()) t.options.emplace_back(key, optionValue(value, base, at));
      else if (value.get<bool>()) t.options.emplace_back(key, "");
    }
  }
  return t;
}

// [models], [corpora] or [variants]: name -> table, in file order.
std::vector<std::pair<std::string, OptionTable>> readGroup(const Json& root, const char* group, const fs::path& base,
                                                           const std::string& file, bool required, const OptionCatalog& catalog) {
  std::vector<std::pair<std::string, OptionTable>> out;
  if (!root.contains(group)) {
    if (required) throw InputError(file, std::string("has no [") + group + ".<name>] table");
    out.emplace_back("", OptionTable{});
    return out;
  }
  if (!root[group].is_object() || root[group].empty()) throw InputError(file, std::string("[") + group + "] must hold named tables");
  for (const auto& [name, table] : root[group].items()) {
    checkPlainName(name, file + ": [" + group + "." + jsonText(name) + "]");
    out.emplace_back(name, readTable(table, base, file + ": [" + group + "." + name + "]", catalog));
  }
  return out;
}

struct ModelEntry {
  std::string name, checkpoint;  // checkpoint: empty unless one of a series
  std::optional<int64_t> step;
  OptionTable table;
};

// [models.*], a series' `model` (a list, or a pattern that matches) one entry per checkpoint.
std::vector<ModelEntry> expandSeries(const Json& root, const std::vector<std::pair<std::string, OptionTable>>& models,
                                     const fs::path& base, const std::string& file) {
  std::vector<ModelEntry> out;
  for (const auto& [name, table] : models) {
    const Json& raw = root["models"][name].contains("model") ? root["models"][name]["model"] : Json();
    const std::string where = file + ": [models." + name + "] model";
    std::vector<fs::path> checkpoints;
    if (raw.is_array()) {
      if (raw.empty() || !std::all_of(raw.begin(), raw.end(), [](const Json& v) { return v.is_string(); }))
        throw InputError(where, "a list of checkpoints must hold directory names (strings)");
      for (const auto& v : raw) checkpoints.emplace_back(optionValue(v, base, where));
    } else if (raw.is_string() && isCheckpointPattern(raw.get<std::string>())) {
      checkpoints = matchingCheckpoints(optionValue(raw, base, where), where);
    }
    if (checkpoints.empty()) {  // one model (a pattern that matches nothing runs as itself, and is skipped)
      out.push_back({name, "", std::nullopt, table});
      continue;
    }
    requireOneCheckpointAStep(checkpoints, where);
    for (const auto& dir : checkpoints) {
      ModelEntry e{name, dir.filename().string(), checkpointStep(dir.filename().string()), table};
      for (auto& [key, value] : e.table.options)
        if (key == "model") value = dir.string();
      out.push_back(std::move(e));
    }
  }
  return out;
}

// Every model and corpus of a sweep with a reference directory has its reference there.
void checkReferences(const Sweep& sweep, const fs::path& reference_dir, const std::string& file) {
  std::vector<std::string> missing;
  for (const auto& run : sweep.runs)
    if (!run.reference.empty() && !fs::is_regular_file(run.reference)) {
      const auto name = run.reference.filename().string();
      if (std::find(missing.begin(), missing.end(), name) == missing.end()) missing.push_back(name);
    }
  if (missing.empty()) return;
  const std::size_t shown = std::min<std::size_t>(missing.size(), 4);
  std::vector<std::string> listed(missing.begin(), missing.begin() + static_cast<std::ptrdiff_t>(shown));
  if (missing.size() > shown) listed.push_back("and " + std::to_string(missing.size() - shown) + " more");
  throw InputError(file + ": reference", reference_dir.string() + " has no " + joined(listed) +
                                             ": every model and corpus of the sweep is checked against its <model>-<corpus>.json");
}

std::string describeRun(const SweepRun& run) {
  return "[models." + run.model + "]" + (run.checkpoint.empty() ? "" : " " + run.checkpoint) + " x [corpora." + run.corpus + "]" +
         (run.variant.empty() ? "" : " x [variants." + run.variant + "]");
}

// Two runs that would write one directory (model a-b x corpus wiki, model a x corpus
// b-wiki: both a-b-wiki), or two series one page, are refused: the second would be "kept"
// as the first one's report, and tabled as its own.
void checkDistinctOutputs(const Sweep& sweep, const std::string& file) {
  std::map<std::string, const SweepRun*> by_dir, by_page;
  for (const auto& run : sweep.runs) {
    if (const auto [it, fresh] = by_dir.emplace(run.name, &run); !fresh)
      throw InputError(file, describeRun(*it->second) + " and " + describeRun(run) + " would both write " + run.name +
                                 " in out: rename a model or corpus");
    if (!run.step) continue;
    const auto [it, fresh] = by_page.emplace(seriesTitle(run), &run);
    const SweepRun& other = *it->second;
    if (!fresh && (other.model != run.model || other.corpus != run.corpus || other.variant != run.variant))
      throw InputError(file, describeRun(other) + " and " + describeRun(run) + " would both draw series-" + seriesTitle(run) +
                                 ".html: rename a model or corpus");
  }
}

}  // namespace

std::string joined(const std::vector<std::string>& items, const std::string& separator) {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

std::string seriesTitle(const SweepRun& run) { return run.model + run.name.substr(run.model.size() + 1 + run.checkpoint.size()); }

const std::vector<std::string>& tableColumnNames() {
  // A layer's numbers in summary.json (report::summaryJson), then the two of a run's own.
  namespace keys = report::keys;
  static const std::vector<std::string> names{
      keys::kScreenotRank, keys::kScreenotThreshold, keys::kStableRank, keys::kExplainedRatio, keys::kRelativeNorm,
      keys::kGlobalMeanNorm, keys::kPosFroNorm, keys::kLowfreqEnergy, keys::kIncoherenceMax, keys::kIncoherenceMean,
      keys::kMeanHiddenNorm, keys::kPreviousLayerCosine, keys::kSequences, keys::kPositions, keys::kContextCosWithinLabel,
      keys::kContextCosBetweenLabel, keys::kContextSimilarity, keys::kHeadClassesColumn};
  return names;
}

Sweep readSweep(const fs::path& config, const OptionCatalog& catalog) {
  const Json root = io::readTomlOrJsonFile(config);
  const std::string file = config.string();
  const fs::path base = config.has_parent_path() ? config.parent_path() : fs::path(".");
  for (const auto& [key, value] : root.items())
    if (key != "out" && key != "reference" && key != "analyze" && key != "models" && key != "corpora" && key != "variants")
      throw InputError(file, "unknown key '" + key + "' (out, reference, [analyze], [models.*], [corpora.*], [variants.*])");
  Sweep sweep;
  sweep.config = config;
  if (root.contains("out") && !root["out"].is_string()) throw InputError(file, "out must be a path (a string)");
  sweep.out = root.contains("out") ? fs::path(root["out"].get<std::string>()) : fs::path("posgeom-sweep");
  if (sweep.out.empty()) throw InputError(file + ": out", "is empty: name the directory the sweep writes into");
  const OptionTable common = root.contains("analyze") ? readTable(root["analyze"], base, file + ": [analyze]", catalog) : OptionTable{};
  const auto models = readGroup(root, "models", base, file, true, catalog);
  const auto corpora = readGroup(root, "corpora", base, file, true, catalog);
  const auto variants = readGroup(root, "variants", base, file, false, catalog);
  fs::path reference_dir;
  if (root.contains("reference")) {
    reference_dir = optionValue(root["reference"], base, file + ": reference");
    // A CI pin with a typo in it must fail, not pass with nothing checked.
    if (!fs::is_directory(reference_dir))
      throw InputError(file + ": reference", reference_dir.string() + (fs::exists(reference_dir) ? ": is not a directory" : ": does not exist"));
  }
  for (const auto& entry : expandSeries(root, models, base, file))
    for (const auto& [corpus, c] : corpora)
      for (const auto& [variant, v] : variants) {
        const std::string& model = entry.name;
        const OptionTable& m = entry.table;
        SweepRun run;
        run.model = model;
        run.corpus = corpus;
        run.variant = variant;
        run.checkpoint = entry.checkpoint;
        run.step = entry.step;
        run.name = model + (entry.checkpoint.empty() ? "" : "-" + entry.checkpoint) + "-" + corpus + (variants.size() > 1 ? "-" + variant : "");
        for (const OptionTable* t : {&common, &m, &c, &v})
          for (const auto& option : t->options) {
            // (a named copy: C++17 lambdas cannot capture a structured binding)
            const std::string& key = option.first;
            auto it = std::find_if(run.options.begin(), run.options.end(), [&](const auto& o) { return o.first == key; });
            if (it == run.options.end()) run.options.push_back(option);
            else it->second = option.second;
          }
        run.table_columns = kDefaultColumns;
        for (const OptionTable* t : {&common, &m, &c, &v}) {
          if (t->columns) run.table_columns = *t->columns;
          if (t->layers) run.table_layers = *t->layers, run.table_layers_key = t->layers_key;
        }
        if (!reference_dir.empty()) run.reference = reference_dir / (model + "-" + corpus + ".json");
        sweep.runs.push_back(std::move(run));
      }
  checkReferences(sweep, reference_dir, file);
  checkDistinctOutputs(sweep, file);
  return sweep;
}

}  // namespace posgeom::jobs
