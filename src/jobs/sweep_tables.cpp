#include "posgeom/jobs/sweep_tables.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/json_file.h"
#include "posgeom/report/series_report.h"
#include "posgeom/report/summary_keys.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace keys = report::keys;
namespace {

std::string cell(const nlohmann::json& v) {
  if (v.is_number_float()) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g", v.get<double>());
    return buf;
  }
  return v.is_null() ? "" : v.dump();
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

// One series.html per model, corpus and variant whose runs are checkpoints with steps,
// from the summaries writeSweepTables read (null where a run has no report).
nlohmann::json writeSeriesPages(const Sweep& sweep, const std::vector<std::optional<report::RunSummary>>& summaries) {
  std::vector<std::pair<std::string, std::vector<report::SeriesPoint>>> series;  // title -> points in run order
  for (std::size_t i = 0; i < sweep.runs.size(); ++i) {
    const auto& run = sweep.runs[i];
    if (!run.step) continue;
    const std::string title = seriesTitle(run);
    auto it = std::find_if(series.begin(), series.end(), [&](const auto& s) { return s.first == title; });
    if (it == series.end()) it = series.insert(series.end(), {title, {}});
    if (!summaries[i]) continue;
    report::SeriesPoint point{*run.step, *summaries[i], std::nullopt};
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

}  // namespace

std::string runStatusName(RunStatus status) {
  switch (status) {
    case RunStatus::kOk: return "ok";
    case RunStatus::kKept: return "kept";
    case RunStatus::kSkipped: return "skipped";
    case RunStatus::kFailed: return "failed";
  }
  return "";
}

void writeSweepTables(const Sweep& sweep, const std::vector<RunOutcome>& outcomes) {
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
  std::vector<std::optional<report::RunSummary>> summaries(sweep.runs.size());  // read once, for the tables and the series pages
  for (std::size_t i = 0; i < sweep.runs.size(); ++i) {
    const auto& run = sweep.runs[i];
    const auto& outcome = outcomes[i];
    TableRow& row = rowFor(run);
    series = series || !run.checkpoint.empty();
    // Every long-form line of this run starts with its model, step and corpus.
    const std::string key = run.model + "," + (run.step ? std::to_string(*run.step) : "") + "," + run.corpus;
    status.push_back({{"name", run.name},
                      {"status", runStatusName(outcome.status)},
                      {"message", outcome.message},
                      {"out", (sweep.out / run.name).string()},
                      {"check", outcome.check_passed ? nlohmann::json(*outcome.check_passed) : nlohmann::json(nullptr)},
                      {"check_summary", outcome.check_summary}});
    if (!outcome.ran()) {
      row.notes.push_back(run.name + " " + runStatusName(outcome.status) + ": " + outcome.message);
      continue;
    }
    if (outcome.check_passed) row.notes.push_back(run.name + " check: " + outcome.check_summary);
    summaries[i] = report::RunSummary::read(sweep.out / run.name / keys::kSummaryFile);
    const auto& summary = *summaries[i];
    const auto layers = summary.layers();
    // Found before the runs for a model's layers; an --activations run's are known only now.
    std::vector<std::string> absent;
    for (const auto l : run.table_layers)
      if (std::none_of(layers.begin(), layers.end(), [&](const report::LayerRow& layer) { return layer.layer == l; }))
        absent.push_back(std::to_string(l));
    if (!absent.empty()) {
      row.notes.push_back(run.name + " has no layer " + joined(absent));
      spdlog::warn("{}: {}: its report has no layer {}", run.table_layers_key, run.name, joined(absent));
    }
    for (const auto& column : run.table_columns) {
      if (std::find(columns.begin(), columns.end(), column) == columns.end()) columns.push_back(column);
      if (column == keys::kContextSimilarity) {
        const auto* similarity = summary.find(keys::kContextSimilarity);
        if (!similarity) continue;
        const auto& c = *similarity;
        for (const char* k : keys::kContextSimilarityValues)
          csv << key << "," << keys::kContextMetricPrefix << k << ",," << c[k].dump() << "\n";
        row.cells[column] = "B " + cell(c[keys::kBetweenMean]) + " ± " + cell(c[keys::kBetweenStd]) + ", W " + cell(c[keys::kWithinMean]) +
                            " ± " + cell(c[keys::kWithinStd]);
        continue;
      }
      if (column == keys::kHeadClassesColumn) {  // with --heads: each block's local / slow-decay / uniform heads
        if (!summary.hasHeads()) continue;
        std::map<int64_t, std::map<heads::HeadKind, int64_t>> counts;  // a block whose heads' classes are unknown still shows
        for (const auto& h : summary.heads()) {
          auto& by_kind = counts[h.block];
          if (h.kind) by_kind[*h.kind] += 1;
        }
        std::string text;
        for (const auto& [block, by_kind] : counts) {
          std::string cell_text = "B" + std::to_string(block);
          for (const auto kind : heads::kHeadKinds) {
            const auto it = by_kind.find(kind);
            const int64_t n = it == by_kind.end() ? 0 : it->second;
            const auto name = heads::headKindName(kind);
            csv << key << "," << keys::kHeadClassMetricPrefix << name << "," << block << "," << n << "\n";
            cell_text += " " + name.substr(0, 1) + std::to_string(n);  // l, s, u
          }
          text += (text.empty() ? "" : "; ") + cell_text;
        }
        row.cells[column] = text;
        continue;
      }
      std::string text;
      for (const auto& layer : layers) {
        const auto l = layer.layer;
        if (!run.table_layers.empty() && std::find(run.table_layers.begin(), run.table_layers.end(), l) == run.table_layers.end()) continue;
        const auto* value = layer.find(column.c_str());
        if (!value) continue;
        csv << key << "," << column << "," << l << "," << value->dump() << "\n";
        text += (text.empty() ? "" : " ") + cell(*value);
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

}  // namespace posgeom::jobs
