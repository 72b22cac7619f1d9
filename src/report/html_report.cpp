#include "posgeom/report/html_report.h"

#include <sstream>

#include "posgeom/report/head_figures.h"
#include "posgeom/report/html_page.h"
#include "posgeom/report/neuron_tables.h"
#include "posgeom/report/layer_figures.h"
#include "posgeom/report/run_summary.h"
#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_number_float()) return formatNumber(v.get<double>());
  if (v.is_string()) return escapeXml(v.get<std::string>());
  return escapeXml(v.dump());
}

std::string identityTable(const RunSummary& summary) {
  std::ostringstream out;
  out << "<div class=\"scroll\"><table class=\"identity\">";
  for (const char* key : keys::kIdentity)
    if (const auto* value = summary.find(key)) out << "<tr><th>" << key << "</th><td>" << cell(*value) << "</td></tr>";
  if (const auto* data = summary.find(keys::kData))
    for (const auto& [key, value] : data->items())
      out << "<tr><th>data." << escapeXml(key) << "</th><td>" << cell(value) << "</td></tr>";
  out << "</table></div>";
  return out.str();
}

std::string layerTable(const RunSummary& summary) {
  std::ostringstream out;
  out << "<div class=\"scroll\"><table class=\"numbers\"><tr>";
  for (const char* k : keys::kLayerTableColumns) out << "<th>" << k << "</th>";
  out << "</tr>";
  for (const auto& row : summary.layers()) {
    out << "<tr>";
    for (const char* k : keys::kLayerTableColumns) {
      const auto* value = row.find(k);
      out << "<td>" << (value ? cell(*value) : "") << "</td>";
    }
    out << "</tr>";
  }
  out << "</table></div>";
  return out.str();
}

// Issue 36, a row per layer: the median, how many dimensions are massive, the largest one
// and where, and what they do to pos_0 and to the positional variance.
std::string massiveTable(const RunSummary& summary) {
  std::ostringstream out;
  out << "<div class=\"scroll\"><table class=\"numbers\"><tr><th>layer</th><th>median |h|</th><th>massive dims</th>"
         "<th>largest (dim@position)</th><th>max |h|</th><th>x median</th><th>token id</th><th>its share of |pos_0|^2</th><th>|pos_0|</th>"
         "<th>massive share of |pos_0|^2</th><th>position share, position 0 in</th><th>position share, position 0 out</th></tr>";
  for (const auto& row : summary.layers()) {
    const auto* m = row.find(keys::kMassiveActivations);
    if (!m) continue;
    const auto& top = m->at(keys::kTop);
    const auto& largest = top.empty() ? nlohmann::json::object() : top.front();
    auto at = [&](const char* k) { return largest.contains(k) ? cell(largest.at(k)) : std::string(); };
    const auto& shares = m->at(keys::kVarianceShares);
    out << "<tr><td>" << row.layer << "</td><td>" << cell(m->at(keys::kMedianAbs)) << "</td><td>"
        << cell(m->at(keys::kMassiveDimensions)) << "</td><td>" << at(keys::kDim) << "@" << at(keys::kPosition) << "</td><td>"
        << at(keys::kMaxAbs) << "</td><td>" << at(keys::kTimesMedian) << "</td><td>" << at(keys::kTokenId) << "</td><td>"
        << at(keys::kPos0Share) << "</td><td>"
        << cell(m->at(keys::kPosition0).at(keys::kPosNorm)) << "</td><td>" << cell(m->at(keys::kPosition0).at(keys::kMassiveShare))
        << "</td><td>" << cell(shares.at(keys::kWithPosition0).at(keys::kPositionShare)) << "</td><td>"
        << cell(shares.at(keys::kWithoutPosition0).at(keys::kPositionShare)) << "</td></tr>";
  }
  out << "</table></div>";
  return out.str();
}

}  // namespace

std::string htmlReport(const nlohmann::json& summary_json, const std::vector<metrics::LayerMetrics>& layers,
                       const std::vector<heads::HeadReport>& heads) {
  const RunSummary summary(summary_json);
  const std::string name = summary.title();
  const std::string massive = massiveActivationsFigure(layers);  // "" for states without magnitudes
  std::ostringstream out;
  out << pageStart("posgeom report: " + name);
  out << "<h1>posgeom report: " << escapeXml(name) << "</h1>\n<nav><a href=\"#numbers\">numbers</a><a href=\"#across\">across "
         "layers</a><a href=\"#basis\">positional basis</a>"
      << (massive.empty() ? "" : "<a href=\"#massive\">massive activations</a>")
      << (heads.empty() ? "" : "<a href=\"#heads\">attention heads</a>")
      << (summary.find(keys::kNeurons) ? "<a href=\"#neurons\">neurons</a>" : "") << "</nav>\n";
  out << "<section id=\"identity\"><h2>Run</h2>" << identityTable(summary) << "</section>\n";
  out << "<section id=\"numbers\"><h2>Per-layer numbers</h2>" << layerTable(summary) << "</section>\n";
  out << "<section id=\"across\"><h2>Across layers</h2><div class=\"row\">" << ranksFigure(summary) << normsFigure(summary)
      << similarityFigure(summary) << layerCosinesFigure(layers) << "</div></section>\n";
  out << "<section id=\"basis\"><h2>Positional basis, layer by layer</h2>" << gramFigure(layers) << combinedGramFigure(layers)
      << spiralFigure(layers) << singularValuesFigure(layers) << dctFigure(layers) << "</section>\n";
  if (!massive.empty())
    out << "<section id=\"massive\"><h2>Massive activations</h2>" << massiveTable(summary) << massive << "</section>\n";
  if (!heads.empty())
    out << "<section id=\"heads\"><h2>Attention heads</h2>" << etcMapFigure(heads) << kernelTvMapFigure(heads) << sinkShareFigure(heads) << learnedSinkShareFigure(heads) << ropeBandsFigure(heads) << probeFigures(heads) << kernelProfilesFigure(heads) << kernelMapsFigure(heads)
        << qkMapsFigure(heads) << qkBasisFigure(heads) << "</section>\n";
  out << neuronsSection(summary.json());
  out << pageEnd();
  return out.str();
}

}  // namespace posgeom::report
