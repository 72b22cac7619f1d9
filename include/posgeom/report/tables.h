#pragma once
// summary.json and the CSV tables of a report directory, written atomically.
#include <filesystem>
#include <nlohmann/json.hpp>
#include <vector>

#include "posgeom/heads/head_analysis.h"
#include "posgeom/metrics/layer_metrics.h"

namespace posgeom::report {

// DESIGN §7: the run's identity and settings plus per-layer numbers and cross-layer
// consistency.
nlohmann::json summaryJson(const nlohmann::json& settings, const std::vector<metrics::LayerMetrics>& layers,
                           const std::vector<metrics::CrossLayerMetrics>& cross,
                           const std::vector<heads::HeadReport>& head_reports = {});

// summary.json, layers.csv, and per layer pos_L<l>.csv, gram_L<l>.csv, gram_dct_L<l>.csv,
// singular_values_L<l>.csv, spiral_L<l>.csv, power_spectrum_L<l>.csv.
// With heads: heads.csv (the summary's heads list as a table), and per layer etc_L<l>.csv
// (ETC curves, a row per head) and kernel_L<l>.csv (the last position's kernel, a row per head).
void writeTables(const std::filesystem::path& dir, const nlohmann::json& summary,
                 const std::vector<metrics::LayerMetrics>& layers, const std::vector<heads::HeadReport>& head_reports = {});

// What a matrix CSV's rows and columns are: a header row (the index column's name, then
// the columns' names) and an index column (each row's label: a real position after
// skip_first, a head, a frequency).
struct CsvAxes {
  std::string index_name;             // "position", "head", "frequency", "component", "query"
  std::vector<std::string> rows;      // one label per row
  std::vector<std::string> columns;   // one name per column
};
// `count` labels: prefix + first, prefix + (first + 1), ...
std::vector<std::string> csvLabels(const std::string& prefix, int64_t first, int64_t count);
// A matrix as CSV, one row per line, %.17g; NaN (padding) as an empty cell.
std::string matrixCsv(const Eigen::MatrixXd& m, const CsvAxes& axes);

}  // namespace posgeom::report
