#include "posgeom/report/html_report.h"

#include <sstream>

#include "posgeom/report/head_figures.h"
#include "posgeom/report/neuron_tables.h"
#include "posgeom/report/layer_figures.h"
#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

constexpr const char* kStyle = R"(
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",Helvetica,Arial,sans-serif;margin:0 auto;padding:16px 20px;max-width:1400px;color:#222}
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 8px;border-bottom:1px solid #ddd}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:12px}td,th{padding:2px 8px;border-bottom:1px solid #eee;text-align:right;white-space:nowrap}
th{background:#f5f5f5}table.identity td{text-align:left}
figure{margin:8px 0 20px}figcaption{font-size:13px;color:#444;max-width:900px;margin-top:4px}
.panels{display:flex;flex-wrap:wrap;gap:6px}.row{display:flex;flex-wrap:wrap;gap:24px}.row figure{max-width:360px}
svg.plot{max-width:100%;height:auto;background:#fff}
svg text{font:10px system-ui,Helvetica,Arial,sans-serif;fill:#222}svg text.title{font-size:11px;font-weight:600}
svg text.label{font-size:10px;fill:#444}svg text.tick,svg text.legend{font-size:9px}
svg .frame{fill:none;stroke:#999;stroke-width:.6}svg .tick{stroke:#999}svg image.heat{image-rendering:pixelated}
nav a{margin-right:12px}
@media print{body{max-width:none;padding:0}figure,tr{break-inside:avoid}nav{display:none}}
)";

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
  out << "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><meta name=\"viewport\" "
         "content=\"width=device-width, initial-scale=1\"><title>posgeom report: "
      << escapeXml(name) << "</title><style>" << kStyle << "</style></head><body>\n";
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
  out << "</body></html>\n";
  return out.str();
}

}  // namespace posgeom::report
