#include "posgeom/report/html_report.h"

#include <sstream>

#include "posgeom/report/head_figures.h"
#include "posgeom/report/html_page.h"
#include "posgeom/report/neuron_tables.h"
#include "posgeom/report/layer_figures.h"
#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

std::string cell(const nlohmann::json& v) {
  if (v.is_null()) return "";
  if (v.is_number_float()) return formatNumber(v.get<double>());
  if (v.is_string()) return escapeXml(v.get<std::string>());
  return escapeXml(v.dump());
}

std::string identityTable(const nlohmann::json& summary) {
  std::ostringstream out;
  out << "<div class=\"scroll\"><table class=\"identity\">";
  for (const char* key : {"model", "model_type", "source", "activations", "corpus", "tokenizer", "seq_len", "skip_first", "layer_selection",
                          "dtype", "device", "sampling", "seed", "causal", "shard", "version"})
    if (summary.contains(key)) out << "<tr><th>" << key << "</th><td>" << cell(summary[key]) << "</td></tr>";
  if (summary.contains("data"))
    for (const auto& [key, value] : summary["data"].items())
      out << "<tr><th>data." << escapeXml(key) << "</th><td>" << cell(value) << "</td></tr>";
  out << "</table></div>";
  return out.str();
}

std::string layerTable(const nlohmann::json& summary) {
  const std::vector<std::string> keys{"layer", "screenot_rank", "stable_rank", "explained_ratio", "relative_norm",
                                      "lowfreq_energy", "incoherence_max", "incoherence_mean", "context_cos_within_label",
                                      "context_cos_between_label", "mean_hidden_norm", "previous_layer_cosine"};
  std::ostringstream out;
  out << "<div class=\"scroll\"><table class=\"numbers\"><tr>";
  for (const auto& k : keys) out << "<th>" << k << "</th>";
  out << "</tr>";
  for (const auto& row : summary.at("layers")) {
    out << "<tr>";
    for (const auto& k : keys) out << "<td>" << (row.contains(k) ? cell(row[k]) : "") << "</td>";
    out << "</tr>";
  }
  out << "</table></div>";
  return out.str();
}

}  // namespace

std::string htmlReport(const nlohmann::json& summary, const std::vector<metrics::LayerMetrics>& layers,
                       const std::vector<heads::HeadReport>& heads) {
  const std::string name = summary.value("model", summary.value("source", std::string("analysis")));
  std::ostringstream out;
  out << pageStart("posgeom report: " + name);
  out << "<h1>posgeom report: " << escapeXml(name) << "</h1>\n<nav><a href=\"#numbers\">numbers</a><a href=\"#across\">across "
         "layers</a><a href=\"#basis\">positional basis</a>"
      << (heads.empty() ? "" : "<a href=\"#heads\">attention heads</a>")
      << (summary.contains("neurons") ? "<a href=\"#neurons\">neurons</a>" : "") << "</nav>\n";
  out << "<section id=\"identity\"><h2>Run</h2>" << identityTable(summary) << "</section>\n";
  out << "<section id=\"numbers\"><h2>Per-layer numbers</h2>" << layerTable(summary) << "</section>\n";
  out << "<section id=\"across\"><h2>Across layers</h2><div class=\"row\">" << ranksFigure(summary) << normsFigure(summary)
      << similarityFigure(summary) << "</div></section>\n";
  out << "<section id=\"basis\"><h2>Positional basis, layer by layer</h2>" << gramFigure(layers) << combinedGramFigure(layers)
      << spiralFigure(layers) << singularValuesFigure(layers) << dctFigure(layers) << "</section>\n";
  if (!heads.empty())
    out << "<section id=\"heads\"><h2>Attention heads</h2>" << etcMapFigure(heads) << kernelTvMapFigure(heads) << probeFigures(heads) << kernelProfilesFigure(heads) << kernelMapsFigure(heads)
        << qkMapsFigure(heads) << qkBasisFigure(heads) << "</section>\n";
  out << neuronsSection(summary);
  out << pageEnd();
  return out.str();
}

}  // namespace posgeom::report
