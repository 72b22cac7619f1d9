#include "posgeom/jobs/batch_job.h"

#include <spdlog/spdlog.h>

#include <fnmatch.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <map>
#include <memory>
#include <set>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/json_file.h"
#include "posgeom/io/path_lock.h"
#include "posgeom/io/toml_file.h"
#include "posgeom/model/architecture.h"
#include "posgeom/report/check.h"
#include "posgeom/report/series_report.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace {

using Json = nlohmann::ordered_json;

const std::vector<std::string> kDefaultColumns{"screenot_rank", "stable_rank", "relative_norm", "context_similarity"};

std::string joined(const std::vector<std::string>& items, const std::string& separator = ", ") {
  std::string out;
  for (const auto& item : items) out += (out.empty() ? "" : separator) + item;
  return out;
}

// A value as JSON text for a message; bytes that are not UTF-8 (a key may hold any) as U+FFFD.
std::string jsonText(const Json& value) { return value.dump(-1, ' ', false, Json::error_handler_t::replace); }

std::size_t editDistance(const std::string& a, const std::string& b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diagonal = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t above = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

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

// The step a checkpoint's directory name ends with: step_1200, checkpoint-500.
std::optional<int64_t> stepOf(const std::string& name) {
  std::size_t digits = name.size();
  while (digits > 0 && std::isdigit(static_cast<unsigned char>(name[digits - 1]))) --digits;
  if (digits == name.size() || digits == 0 || (name[digits - 1] != '_' && name[digits - 1] != '-') || name.size() - digits > 18)
    return std::nullopt;
  return std::stoll(name.substr(digits));
}

struct ModelEntry {
  std::string name, checkpoint;  // checkpoint: empty unless one of a series
  std::optional<int64_t> step;
  OptionTable table;
};

bool isPattern(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

// The checkpoints of a model's `model` pattern (its last component), in step order.
std::vector<fs::path> matchingCheckpoints(const fs::path& pattern, const std::string& where) {
  if (isPattern(pattern.parent_path().string())) throw InputError(where, "only the last component of a model pattern may hold * or ?");
  std::vector<fs::path> out;
  std::vector<std::string> files;  // matches that cannot be checkpoints
  std::error_code ec;
  const fs::path dir = pattern.has_parent_path() ? pattern.parent_path() : fs::path(".");
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
    if (fnmatch(pattern.filename().c_str(), it->path().filename().c_str(), FNM_PERIOD) == 0) {
      if (it->is_directory()) out.push_back(it->path());
      else files.push_back(it->path().filename().string());
    }
  std::sort(files.begin(), files.end());
  if (!files.empty()) spdlog::warn("{}: left out {}: they match the pattern but are not checkpoint directories", where, joined(files));
  std::sort(out.begin(), out.end(), [](const fs::path& a, const fs::path& b) {
    const auto sa = stepOf(a.filename().string()), sb = stepOf(b.filename().string());
    if (sa.has_value() != sb.has_value()) return sa.has_value();
    return sa && *sa != *sb ? *sa < *sb : a.filename() < b.filename();
  });
  return out;
}

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
    } else if (raw.is_string() && isPattern(raw.get<std::string>())) {
      checkpoints = matchingCheckpoints(optionValue(raw, base, where), where);
    }
    if (checkpoints.empty()) {  // one model (a pattern that matches nothing runs as itself, and is skipped)
      out.push_back({name, "", std::nullopt, table});
      continue;
    }
    // table.csv and the series page tell a series' checkpoints apart by their step.
    std::map<int64_t, fs::path> by_step;
    for (const auto& dir : checkpoints)
      if (const auto step = stepOf(dir.filename().string()))
        if (const auto [it, fresh] = by_step.emplace(*step, dir); !fresh)
          throw InputError(where, it->second.string() + " and " + dir.string() + " are both step " + std::to_string(*step) +
                                      ": a series holds one checkpoint a step");
    for (const auto& dir : checkpoints) {
      ModelEntry e{name, dir.filename().string(), stepOf(dir.filename().string()), table};
      for (auto& [key, value] : e.table.options)
        if (key == "model") value = dir.string();
      out.push_back(std::move(e));
    }
  }
  return out;
}

std::string cell(const nlohmann::json& v) {
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g", v.get<double>());
    return buf;
  }
  return v.is_null() ? "" : v.dump();
}

// The reference restricted to what a run provides, so that a run is checked on its columns only.
nlohmann::json referenceFor(const nlohmann::json& reference, const std::vector<std::string>& columns) {
  nlohmann::json out = nlohmann::json::object();
  if (reference.contains("tolerances")) out["tolerances"] = reference["tolerances"];
  const bool context = std::find(columns.begin(), columns.end(), "context_similarity") != columns.end();
  if (context && reference.contains("context_similarity")) out["context_similarity"] = reference["context_similarity"];
  if (reference.contains("layers")) {
    nlohmann::json layers = nlohmann::json::array();
    for (const auto& l : reference["layers"]) {
      nlohmann::json kept = {{"layer", l.at("layer")}};
      for (const auto& c : columns)
        if (l.contains(c)) kept[c] = l[c];
      if (kept.size() > 1) layers.push_back(kept);
    }
    if (!layers.empty()) out["layers"] = layers;
  }
  return out;
}

// What batch adds to a run's summary.json: the run of the sweep that made it, as the
// sweep file gave it (its options as written, paths resolved).
nlohmann::json sweepRecord(const SweepRun& run) {
  nlohmann::json options = nlohmann::json::object();
  for (const auto& [key, value] : run.options) options[key] = value;
  return {{"model", run.model}, {"corpus", run.corpus}, {"variant", run.variant}, {"checkpoint", run.checkpoint}, {"options", options}};
}

void recordSweepRun(const SweepRun& run, const fs::path& summary_path) {
  auto summary = io::readJsonFile(summary_path);
  summary["sweep"] = sweepRecord(run);
  io::writeTextFileAtomically(summary_path, summary.dump(2) + "\n");
}

// The options whose values differ: seq-len (then "64", now "32").
std::string optionsDifference(const nlohmann::json& then, const nlohmann::json& now) {
  std::vector<std::string> differ;
  auto text = [](const nlohmann::json& options, const std::string& key) {
    return !options.contains(key) ? std::string("not set") : options[key] == "" ? std::string("set") : options[key].dump();
  };
  for (const auto* side : {&then, &now})
    for (const auto& [key, value] : side->items())
      if (then.value(key, nlohmann::json()) != now.value(key, nlohmann::json()) &&
          std::find(differ.begin(), differ.end(), key) == differ.end())
        differ.push_back(key);
  for (auto& key : differ) key += " (then " + text(then, key) + ", now " + text(now, key) + ")";
  return joined(differ);
}

// The model and corpus files' identity as analyze records it (by content: the same files
// under another path are the same, other files under the same path are not).
std::string modelIdentity(const pass::AnalyzeOptions& job) {
  const auto dir = io::resolveModelDir(job.model, io::processEnv(), job.revision);
  return io::modelFingerprint(dir) + " " + io::snapshotCommit(dir);
}

std::string corpusIdentity(const pass::AnalyzeOptions& job) {
  if (corpus::isGenerated(job.corpus.path) || job.corpus.path == "-") return "";
  std::vector<fs::path> files;
  for (const auto& f : corpus::corpusFiles(job.corpus.path)) files.emplace_back(f);
  if (!std::all_of(files.begin(), files.end(), [](const fs::path& f) { return fs::is_regular_file(f); })) return "";
  return io::fingerprintFiles(files);
}

// Why the report at `summary_path` is not this run's ("" when it is).
std::string staleReason(const SweepRun& run, const pass::AnalyzeOptions& job, const fs::path& summary_path) {
  try {
    const auto summary = io::readJsonFile(summary_path);
    if (!summary.is_object() || !summary.contains("sweep")) return "its summary.json records no sweep run (analyze's own, or an older posgeom's)";
    const auto& then = summary["sweep"];
    const auto now = sweepRecord(run);
    for (const char* key : {"model", "corpus", "variant", "checkpoint"})
      if (then.value(key, nlohmann::json()) != now[key])
        return std::string("it is the report of ") + key + " " + then.value(key, nlohmann::json()).dump() + ", not " + now[key].dump();
    if (const auto difference = optionsDifference(then.value("options", nlohmann::json::object()), now["options"]); !difference.empty())
      return "it was made with other options: " + difference;
    if (job.activations.empty() &&
        summary.value("model_fingerprint", "") + " " + summary.value("model_commit", "") != modelIdentity(job))
      return "the model's files (its config or weights) are not the ones it was made from";
    if (job.activations.empty() && summary.value("corpus_fingerprint", "") != corpusIdentity(job))
      return "the corpus's files are not the ones it was made from";
  } catch (const InputError& e) {
    return std::string("it cannot be checked: ") + e.what();
  } catch (const nlohmann::json::exception& e) {
    return "its summary.json is not a report's: " + io::jsonErrorMessage(e);
  }
  return "";
}

struct TableRow {
  std::string model, checkpoint, corpus;
  std::map<std::string, std::string> cells;  // column -> text
  std::vector<std::string> notes;
};

std::string optionOf(const SweepRun& run, const std::string& key) {
  for (const auto& [k, v] : run.options)
    if (k == key) return v;
  return "";
}

// The series page's title: the run's name without its checkpoint, <model>-<corpus>[-<variant>].
std::string seriesTitle(const SweepRun& run) { return run.model + run.name.substr(run.model.size() + 1 + run.checkpoint.size()); }

// One series.html per model, corpus and variant whose runs are checkpoints with steps,
// from the summaries writeTables read (null where a run has no report).
nlohmann::json writeSeriesPages(const Sweep& sweep, const std::vector<nlohmann::json>& summaries) {
  std::vector<std::pair<std::string, std::vector<report::SeriesPoint>>> series;  // title -> points in run order
  for (std::size_t i = 0; i < sweep.runs.size(); ++i) {
    const auto& run = sweep.runs[i];
    if (!run.step) continue;
    const std::string title = seriesTitle(run);
    auto it = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == title; });
    if (it == series.end()) it = series.insert(series.end(), {title, {}});
    if (summaries[i].is_null()) continue;
    report::SeriesPoint point{*run.step, summaries[i], std::nullopt};
    // The loss is a caption, not a result: a checkpoint without a readable training.json has none.
    const fs::path training = fs::path(optionOf(run, "model")) / "training.json";
    try {
      if (fs::is_regular_file(training)) {
        const auto t = io::readJsonFile(training);
        const auto loss = t.value("final_validation_loss", nlohmann::json());
        if (loss.is_number() && loss.get<double>() >= 0) point.validation_loss = loss.get<double>();
      }
    } catch (const InputError& e) {
      spdlog::warn("{}: no validation loss for the series page: {}", run.name, e.what());
    }
    it->second.push_back(std::move(point));
  }
  nlohmann::json pages = nlohmann::json::array();
  for (const auto& [title, points] : series) {
    const std::string page = "series-" + title + ".html";
    io::writeTextFileAtomically(sweep.out / page, report::seriesReport(title, points));
    pages.push_back(page);
  }
  return pages;
}

void writeTables(const Sweep& sweep, const std::vector<RunOutcome>& outcomes) {
  std::ostringstream csv;
  csv << "model,step,corpus,metric,layer,value\n";
  std::vector<TableRow> rows;
  std::vector<std::string> columns;
  bool series = false;
  auto rowFor = [&](const SweepRun& run) -> TableRow& {
    for (auto& r : rows)
      if (r.model == run.model && r.checkpoint == run.checkpoint && r.corpus == run.corpus) return r;
    rows.push_back({run.model, run.checkpoint, run.corpus, {}, {}});
    return rows.back();
  };
  nlohmann::json status = nlohmann::json::array();
  std::vector<nlohmann::json> summaries(sweep.runs.size());  // read once, for the tables and the series pages
  for (std::size_t i = 0; i < sweep.runs.size(); ++i) {
    const auto& run = sweep.runs[i];
    const auto& outcome = outcomes[i];
    TableRow& row = rowFor(run);
    series = series || !run.checkpoint.empty();
    // Every long-form line of this run starts with its model, step and corpus.
    const std::string key = run.model + "," + (run.step ? std::to_string(*run.step) : "") + "," + run.corpus;
    status.push_back({{"name", run.name}, {"status", outcome.status}, {"message", outcome.message}, {"out", (sweep.out / run.name).string()},
                      {"check", outcome.check_passed ? nlohmann::json(*outcome.check_passed) : nlohmann::json(nullptr)},
                      {"check_summary", outcome.check_summary}});
    if (!outcome.ran()) {
      row.notes.push_back(run.name + " " + outcome.status + ": " + outcome.message);
      continue;
    }
    if (outcome.check_passed) row.notes.push_back(run.name + " check: " + outcome.check_summary);
    summaries[i] = io::readJsonFile(sweep.out / run.name / "summary.json");
    const auto& summary = summaries[i];
    // Found before the runs for a model's layers; an --activations run's are known only now.
    std::vector<std::string> absent;
    for (const auto l : run.table_layers)
      if (std::none_of(summary.at("layers").begin(), summary.at("layers").end(), [&](const nlohmann::json& layer) { return layer.at("layer") == l; }))
        absent.push_back(std::to_string(l));
    if (!absent.empty()) {
      row.notes.push_back(run.name + " has no layer " + joined(absent));
      spdlog::warn("{}: {}: its report has no layer {}", run.table_layers_key, run.name, joined(absent));
    }
    for (const auto& column : run.table_columns) {
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
      if (column == "context_similarity") {
        if (!summary.contains("context_similarity")) continue;
        const auto& c = summary["context_similarity"];
        for (const char* k : {"b_mean", "b_std", "w_mean", "w_std"})
          csv << key << ",context_" << k << ",," << c[k].dump() << "\n";
        row.cells[column] = "B " + cell(c["b_mean"]) + " ± " + cell(c["b_std"]) + ", W " + cell(c["w_mean"]) + " ± " + cell(c["w_std"]);
        continue;
      }
      if (column == "head_classes") {  // with --heads: each block's local / slow-decay / uniform heads
        if (!summary.contains("heads")) continue;
        std::map<int64_t, std::map<std::string, int64_t>> counts;
        for (const auto& h : summary["heads"]) counts[h.at("block").get<int64_t>()][h.at("class").get<std::string>()] += 1;
        std::string text;
        for (const auto& [block, by_class] : counts) {
          std::string cell_text = "B" + std::to_string(block);
          for (const auto& [kind, short_name] : {std::pair{"local", "l"}, std::pair{"slow-decay", "s"}, std::pair{"uniform", "u"}}) {
            const auto it = by_class.find(kind);
            const int64_t n = it == by_class.end() ? 0 : it->second;
            csv << key << ",heads_" << kind << "," << block << "," << n << "\n";
            cell_text += std::string(" ") + short_name + std::to_string(n);
          }
          text += (text.empty() ? "" : "; ") + cell_text;
        }
        row.cells[column] = text;
        continue;
      }
      std::string text;
      for (const auto& layer : summary.at("layers")) {
        const auto l = layer.at("layer").get<int64_t>();
        if (!run.table_layers.empty() && std::find(run.table_layers.begin(), run.table_layers.end(), l) == run.table_layers.end()) continue;
        if (!layer.contains(column)) continue;
        csv << key << "," << column << "," << l << "," << layer[column].dump() << "\n";
        text += (text.empty() ? "" : " ") + cell(layer[column]);
      }
      row.cells[column] = text;
    }
  }
  std::ostringstream md;
  md << "| model |" << (series ? " checkpoint |" : "") << " corpus |";
  for (const auto& c : columns) md << " " << c << " |";
  md << " notes |\n|---|" << (series ? "---|" : "") << "---|";
  for (std::size_t i = 0; i < columns.size(); ++i) md << "---|";
  md << "---|\n";
  for (const auto& r : rows) {
    md << "| " << r.model << " |" << (series ? " " + r.checkpoint + " |" : "") << " " << r.corpus << " |";
    for (const auto& c : columns) md << " " << (r.cells.count(c) ? r.cells.at(c) : "") << " |";
    std::string notes;
    for (const auto& n : r.notes) notes += (notes.empty() ? "" : "; ") + n;
    md << " " << notes << " |\n";
  }
  md << "\nPer-layer columns list the values at the table's layers in order (layer maps in " << sweep.config.filename().string()
     << "); context similarity is the mean ± std over layers of |cos| between (B) and within (W) topics.\n";
  io::writeTextFileAtomically(sweep.out / "table.csv", csv.str());
  io::writeTextFileAtomically(sweep.out / "table.md", md.str());
  const auto pages = writeSeriesPages(sweep, summaries);
  io::writeTextFileAtomically(sweep.out / "sweep.json",
                              nlohmann::json{{"config", sweep.config.string()}, {"runs", status}, {"series", pages}}.dump(2) + "\n");
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

// table-layers that a run's model does not have (or its --layer leaves out), found before
// any run where the model's config can be read; a model that cannot be read is the run's
// own fault, reported when it runs.
void checkTableLayers(const SweepRun& run, const pass::AnalyzeOptions& job) {
  if (run.table_layers.empty() || !job.activations.empty()) return;
  int64_t hidden_states = 0;
  try {
    hidden_states = model::loadModelConfig(io::resolveModelDir(job.model, io::processEnv(), job.revision)).num_layers + 1;
  } catch (const InputError&) {
    return;
  }
  std::vector<int64_t> layers = job.layers.indices;
  if (job.layers.all())
    for (int64_t l = 0; l < hidden_states; ++l) layers.push_back(l);
  std::string listed;
  for (const auto l : layers) listed += (listed.empty() ? "" : ",") + std::to_string(l);
  for (const auto l : run.table_layers)
    if (std::find(layers.begin(), layers.end(), l) == layers.end())
      throw InputError(run.table_layers_key, std::to_string(l) + " is not a layer of run " + run.name + " (" +
                                                 (job.layers.all() ? "its model's hidden states are 0 to " + std::to_string(hidden_states - 1)
                                                                   : "its layer option selects " + listed) +
                                                 ")");
}

// A series whose checkpoints are not one architecture (another model_type, width or depth)
// draws them on one page as if they were: said, the sweep goes on.
void warnOfMixedSeries(const Sweep& sweep, const std::function<pass::AnalyzeOptions(const SweepRun&)>& make) {
  std::map<std::string, std::pair<std::string, std::string>> first;  // model -> (checkpoint, architecture)
  std::set<std::string> seen;                                        // model/checkpoint
  for (const auto& run : sweep.runs) {
    if (!run.step || !seen.insert(run.model + "/" + run.checkpoint).second) continue;
    const auto job = make(run);
    std::string architecture;
    try {
      const auto c = model::loadModelConfig(io::resolveModelDir(job.model, io::processEnv(), job.revision));
      architecture = c.model_type + " of " + std::to_string(c.num_layers) + " layers " + std::to_string(c.hidden_size) + " wide";
    } catch (const InputError&) {
      continue;  // the run says why when it runs
    }
    const auto [it, fresh] = first.emplace(run.model, std::make_pair(run.checkpoint, architecture));
    if (!fresh && it->second.second != architecture)
      spdlog::warn("{}: [models.{}] model: {} is a {}, {} a {}: the series page draws them as one model", sweep.config.string(), run.model,
                   run.checkpoint, architecture, it->second.first, it->second.second);
  }
}

}  // namespace

const std::vector<std::string>& tableColumnNames() {
  // A layer's numbers in summary.json (report::summaryJson), then the two of a run's own.
  static const std::vector<std::string> names{
      "screenot_rank", "screenot_threshold", "stable_rank", "explained_ratio", "relative_norm", "global_mean_norm",
      "pos_fro_norm", "lowfreq_energy", "incoherence_max", "incoherence_mean", "mean_hidden_norm", "previous_layer_cosine",
      "sequences", "positions", "context_cos_within_label", "context_cos_between_label",
      "context_similarity", "head_classes"};
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

std::vector<RunOutcome> runSweep(const Sweep& sweep, const JobFactory& make_job) {
  auto* ranks = runtime::currentRanks();
  const bool writes = !ranks || ranks->root();
  if (sweep.out.empty()) throw InputError("out", "is empty: name the directory the sweep writes into");
  // One sweep at a time on an out: two would skip each other's runs and table them as skipped.
  std::unique_ptr<io::PathLock> lock;
  if (writes) lock = std::make_unique<io::PathLock>(sweep.out, "out (or --out)");
  std::error_code ec;
  if (writes) fs::create_directories(sweep.out, ec);
  if (ec) throw InputError(sweep.out.string(), "cannot create the sweep's output directory: " + ec.message());
  std::vector<RunOutcome> outcomes;
  for (std::size_t i = 0; i < sweep.runs.size(); ++i) {
    const auto& run = sweep.runs[i];
    spdlog::info("run {} of {}: {}", i + 1, sweep.runs.size(), run.name);
    RunOutcome outcome{"ok", "", std::nullopt, ""};
    try {
      pass::AnalyzeOptions job = make_job(run);
      job.out = sweep.out / run.name;
      // A sweep run again without --force keeps the reports it already has (and checks
      // them again) when they are this run's: only the runs that did not finish, or whose
      // model, corpus or options changed, run.
      std::string earlier;  // kept, or stale: a report of another run, replaced
      if (!job.force && writes && fs::exists(job.out / "summary.json")) {
        const auto why = staleReason(run, job, job.out / "summary.json");
        earlier = why.empty() ? "kept" : "stale";
        if (!why.empty()) spdlog::info("{}: runs again: the report in {} is not this run's: {}", run.name, job.out.string(), why);
      }
      if (ranks) earlier = ranks->broadcastFromRoot(earlier);  // rank 0 sees the reports
      if (earlier == "kept") {
        outcome = {"kept", "the report of an earlier run (--force runs it again)", std::nullopt, ""};
        spdlog::info("{}: kept the report of an earlier run in {}", run.name, job.out.string());
      } else {
        job.force = job.force || earlier == "stale";  // batch's own output: replaced whole
        runAnalyzeJob(job);
        if (writes) recordSweepRun(run, job.out / "summary.json");
      }
      if (!run.reference.empty() && writes) {
        const auto rows = report::checkAgainstReference(io::readJsonFile(job.out / "summary.json"),
                                                        referenceFor(io::readJsonFile(run.reference), run.table_columns), {},
                                                        run.reference.string());
        const auto moved = std::count_if(rows.begin(), rows.end(), [](const report::CheckRow& r) { return !r.ok; });
        outcome.check_passed = moved == 0;
        outcome.check_summary = std::to_string(rows.size() - static_cast<std::size_t>(moved)) + " of " + std::to_string(rows.size()) +
                                " values within tolerance of " + run.reference.filename().string();
        io::writeTextFileAtomically(job.out / "check.txt", report::formatCheck(rows, true));
      }
    } catch (const RunStopped&) {
      throw;  // Ctrl-C stops the sweep, not only the run in hand
    } catch (const InputError& e) {
      if (ranks) throw;  // every rank stops (see the header)
      outcome = {"skipped", e.what(), std::nullopt, ""};
      spdlog::warn("{} skipped: {}", run.name, e.what());
    } catch (const std::exception& e) {
      if (ranks) throw;
      const std::string what = e.what();
      outcome = {"failed", what.substr(0, what.find('\n')), std::nullopt, ""};
      spdlog::error("{} failed: {}", run.name, outcome.message);
    }
    outcomes.push_back(std::move(outcome));
  }
  if (writes) writeTables(sweep, outcomes);
  return outcomes;
}

std::string BatchSummary::line() const {
  std::string s = std::to_string(ran) + " of " + std::to_string(runs) + " runs have a report";
  if (kept) s += " (" + std::to_string(kept) + " kept from an earlier run)";
  if (checked) s += "; " + std::to_string(checked - moved) + " of " + std::to_string(checked) + " checked runs matched their reference";
  if (skipped) s += "; " + std::to_string(skipped) + " skipped";
  if (failed) s += "; " + std::to_string(failed) + " failed";
  return s + (allPassed() ? ": " : " (see ") + table.string() + (allPassed() ? "" : ")");
}

BatchSummary runBatchJob(const BatchJob& job, const JobFactory& make_job) {
  auto sweep = readSweep(job.config, job.analyze_options);
  if (!job.out.empty()) sweep.out = job.out;
  auto make = [&](const SweepRun& run) {
    auto options = make_job(run);
    options.force = job.force;
    options.dist_init = job.dist_init;
    options.dist_timeout_s = job.dist_timeout_s;
    return options;
  };
  for (const auto& run : sweep.runs) checkTableLayers(run, make(run));  // a misspelt option fails before any run
  warnOfMixedSeries(sweep, make);
  // A distributed launch: the ranks meet once for the whole sweep, on the first run's device.
  runtime::RankGroup* ranks = nullptr;
  if (!sweep.runs.empty()) {
    const auto first = make(sweep.runs.front());
    ranks = runtime::joinRanks(job.dist_init, std::chrono::seconds(job.dist_timeout_s), first.device);
  }
  const auto outcomes = runSweep(sweep, make);
  BatchSummary summary;
  summary.reporting = !ranks || ranks->root();
  summary.runs = outcomes.size();
  for (const auto& o : outcomes) {
    summary.ran += o.ran();
    summary.kept += o.status == "kept";
    summary.skipped += o.status == "skipped";
    summary.failed += o.status == "failed";
    summary.checked += o.check_passed.has_value();
    summary.moved += o.check_passed.has_value() && !*o.check_passed;
  }
  summary.table = sweep.out / "table.md";
  return summary;
}

}  // namespace posgeom::jobs
