#include "posgeom/report/series_report.h"

#include <cmath>
#include <sstream>

#include "posgeom/report/colormap.h"
#include "posgeom/report/html_page.h"
#include "posgeom/report/layer_figures.h"
#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

std::vector<double> steps(const std::vector<SeriesPoint>& points) {
  std::vector<double> out;
  for (const auto& p : points) out.push_back(static_cast<double>(p.step));
  return out;
}

AxisRange stepAxis(const std::vector<double>& x) {
  if (x.empty()) return {0, 1, false};
  const double pad = x.size() > 1 ? (x.back() - x.front()) / static_cast<double>(2 * (x.size() - 1)) : 0.5;
  return {x.front() - pad, x.back() + pad, false};
}

// The layers every point reports, in the first point's order.
std::vector<int64_t> layersOf(const std::vector<SeriesPoint>& points) {
  std::vector<int64_t> out;
  if (!points.empty())
    for (const auto& row : points.front().summary.layers()) out.push_back(row.layer);
  return out;
}

double layerValue(const std::vector<LayerRow>& rows, int64_t layer, const char* key) {
  for (const auto& row : rows)
    if (row.layer == layer) return row.number(key);
  return NAN;
}

// One line per layer, light to dark from the first layer to the last.
std::string metricFigure(const std::vector<SeriesPoint>& points, const char* key, const std::string& title,
                         const std::string& caption) {
  const auto x = steps(points);
  const auto layers = layersOf(points);
  std::vector<std::vector<LayerRow>> rows;
  for (const auto& p : points) rows.push_back(p.summary.layers());
  std::vector<Series> lines;
  std::vector<double> all{0};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Series s{"layer " + std::to_string(layers[i]), x, {}, "", true};
    for (const auto& r : rows) s.y.push_back(layerValue(r, layers[i], key));
    all.insert(all.end(), s.y.begin(), s.y.end());
    const double unit = layers.size() > 1 ? 0.9 * static_cast<double>(i) / static_cast<double>(layers.size() - 1) : 0.5;
    s.color = hexColor(colorAt(ColorMap::kSequential, 0.9 - unit));
    lines.push_back(std::move(s));
  }
  return figureElement(std::string("fig-series-") + key, caption, {linePlotSvg(lines, {title, "training step", key, 420, 280}, stepAxis(x), fitRange(all))});
}

// Rows: heads (block by block), columns: checkpoints; sqrt(ETC) as in report.html's map.
std::string etcFigure(const std::vector<SeriesPoint>& points) {
  const auto first = points.front().summary.heads();
  if (first.empty()) return "";
  const auto heads = static_cast<Eigen::Index>(first.size());
  Eigen::MatrixXd etc = Eigen::MatrixXd::Constant(heads, static_cast<Eigen::Index>(points.size()), NAN);
  for (std::size_t c = 0; c < points.size(); ++c) {
    const auto list = points[c].summary.heads();
    for (Eigen::Index h = 0; h < heads && h < static_cast<Eigen::Index>(list.size()); ++h)
      etc(h, static_cast<Eigen::Index>(c)) = std::sqrt(list[static_cast<std::size_t>(h)].number(keys::kEtc));
  }
  const auto x = steps(points);
  return figureElement(
      "fig-series-etc",
      "sqrt(ETC) of every head (rows: block by block, head by head) at every checkpoint: a head turns local where its row "
      "darkens, and stays uniform where it stays bright.",
      {heatmapSvg(etc, ColorScale::fit(etc, ColorMap::kSequential), {"ETC of every head by step", "training step", "head (block-major)", 420, 300},
                  stepAxis(x), {-0.5, static_cast<double>(heads) - 0.5, false}, "sqrt(ETC)", 256)});
}

std::string classFigure(const std::vector<SeriesPoint>& points) {
  if (!points.front().summary.hasHeads()) return "";
  const auto x = steps(points);
  using heads::HeadKind, heads::headKindName;
  Series local{headKindName(HeadKind::kLocal), x, {}, "#b2182b", true}, slow{headKindName(HeadKind::kSlowDecay), x, {}, "#ef8a62", true},
      uniform{headKindName(HeadKind::kUniform), x, {}, "#2166ac", true};
  std::vector<double> all{0};
  for (const auto& p : points) {
    const auto c = headClassCounts(p.summary);
    local.y.push_back(static_cast<double>(c.local));
    slow.y.push_back(static_cast<double>(c.slow_decay));
    uniform.y.push_back(static_cast<double>(c.uniform));
    all.push_back(static_cast<double>(c.local + c.slow_decay + c.uniform));
  }
  return figureElement("fig-series-classes", "Heads of each ETC class at every checkpoint.",
                       {linePlotSvg({local, slow, uniform}, {"Heads by class", "training step", "heads", 420, 280}, stepAxis(x), fitRange(all))});
}

std::string numbersTable(const std::vector<SeriesPoint>& points) {
  const auto layers = layersOf(points);
  std::ostringstream out;
  out << "<div class=\"scroll\"><table class=\"numbers\"><tr><th>step</th><th>validation loss</th><th>heads l/s/u</th>";
  for (const char* key : {keys::kScreenotRank, keys::kLowfreqEnergy})
    for (auto l : layers) out << "<th>" << key << " L" << l << "</th>";
  out << "</tr>";
  for (const auto& p : points) {
    const auto c = headClassCounts(p.summary);
    out << "<tr><td>" << p.step << "</td><td>" << (p.validation_loss ? formatNumber(*p.validation_loss) : "") << "</td><td>"
        << (p.summary.hasHeads() ? std::to_string(c.local) + "/" + std::to_string(c.slow_decay) + "/" + std::to_string(c.uniform) : "")
        << "</td>";
    const auto rows = p.summary.layers();
    for (const char* key : {keys::kScreenotRank, keys::kLowfreqEnergy})
      for (auto l : layers) {
        const double v = layerValue(rows, l, key);
        out << "<td>" << (std::isfinite(v) ? formatNumber(v) : "") << "</td>";
      }
    out << "</tr>";
  }
  out << "</table></div>";
  return out.str();
}

}  // namespace

HeadClassCounts headClassCounts(const RunSummary& summary) {
  HeadClassCounts c;
  for (const auto& kind : summary.headKinds()) {
    c.local += kind == heads::HeadKind::kLocal;
    c.slow_decay += kind == heads::HeadKind::kSlowDecay;
    c.uniform += kind == heads::HeadKind::kUniform;
  }
  return c;
}

std::string seriesReport(const std::string& title, const std::vector<SeriesPoint>& points) {
  std::ostringstream out;
  out << pageStart("posgeom over training: " + title) << "<h1>posgeom over training: " << escapeXml(title) << "</h1>\n";
  if (points.empty()) return out.str() + "<p>No checkpoint of the series has a report.</p>" + pageEnd();
  out << "<p>" << points.size() << " checkpoints, steps " << points.front().step << " to " << points.back().step
      << "; each analysed like any model (its report.html beside this page).</p>\n";
  out << "<section id=\"numbers\"><h2>By step</h2>" << numbersTable(points) << "</section>\n";
  out << "<section id=\"basis\"><h2>Positional basis over training</h2><div class=\"row\">"
      << metricFigure(points, keys::kScreenotRank, "ScreeNOT rank of P", "ScreeNOT rank of the positional basis of every layer by step.")
      << metricFigure(points, keys::kStableRank, "Stable rank of P", "Stable rank of the positional basis of every layer by step.")
      << metricFigure(points, keys::kLowfreqEnergy, "Low-frequency energy of P",
                      "Share of the positional basis' energy in its lowest DCT frequencies: near 1 once the positions lie on a smooth "
                      "curve (the spiral).")
      << metricFigure(points, keys::kRelativeNorm, "Relative norm of P", "Share of the hidden states' norm that is position, by layer and step.")
      << "</div></section>\n";
  const std::string heads = etcFigure(points) + classFigure(points);
  if (!heads.empty()) out << "<section id=\"heads\"><h2>Attention heads over training</h2><div class=\"row\">" << heads << "</div></section>\n";
  out << pageEnd();
  return out.str();
}

}  // namespace posgeom::report
