#pragma once
// A finished run's summary.json read back: by report.html and its figures, the series
// pages, batch's tables and kept reports, and check. The one reader that knows where each
// thing is (summary_keys.h names the keys): a section a reader needs that the summary
// lacks is an InputError naming the file and the key; one a reader shows only when there
// asks find() or hasHeads(). Torch-free, Eigen-free.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/heads/head_kind.h"
#include "posgeom/report/summary_keys.h"

namespace posgeom::report {

// One row of a list in a summary, as written: its numbers keep their JSON form (integer
// or float) for the tables that print them. Points into the RunSummary, which outlives it.
struct SummaryRow {
  const nlohmann::json* values = nullptr;
  const nlohmann::json* find(const char* key) const;  // nullptr when the row has no such key
  double number(const char* key) const;               // NaN when absent or not a number
};

struct LayerRow : SummaryRow {
  int64_t layer = 0;
};

struct HeadRow : SummaryRow {
  int64_t block = 0;
  std::optional<heads::HeadKind> kind;  // none: a class no kind is named (not counted)
};

struct CrossLayerRow {
  double to = 0;  // the later layer of the pair
  double basis_cosine = 0;
};

class RunSummary {
 public:
  // `where` names the summary in messages: its file.
  explicit RunSummary(nlohmann::json json = nlohmann::json::object(), std::string where = keys::kSummaryFile);
  // Throws io::readJsonFile's InputError (naming the file) when unreadable or not JSON.
  static RunSummary read(const std::filesystem::path& path);

  const nlohmann::json& json() const { return json_; }  // the whole file (check walks it)
  const std::string& where() const { return where_; }

  // A top-level value or section; nullptr when absent (or the summary is not an object).
  const nlohmann::json* find(const char* key) const;
  // A top-level string, "" when absent; nlohmann's type_error when it is not a string.
  std::string text(const char* key) const;
  // What the report is of: its model, else its source, else "analysis".
  std::string title() const;

  std::vector<LayerRow> layers() const;  // each row's "layer" required
  std::vector<CrossLayerRow> crossLayer() const;
  bool hasHeads() const;  // analysed with --heads
  std::vector<HeadRow> heads() const;  // empty without; each row's "block" and "class" required
  // Every head's class, in order (only "class" required); empty without heads.
  std::vector<std::optional<heads::HeadKind>> headKinds() const;

 private:
  const nlohmann::json& required(const char* key) const;
  // list[index].key, a string (`text`) or a number; an InputError naming it when absent or not one.
  const nlohmann::json& requiredIn(const nlohmann::json& row, const char* list, std::size_t index, const char* key, bool text) const;

  std::optional<heads::HeadKind> kindAt(const nlohmann::json& heads, std::size_t index) const;

  nlohmann::json json_;
  std::string where_;
};

}  // namespace posgeom::report
