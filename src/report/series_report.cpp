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
    for (const auto& row : points.front().summary.at("layers")) out.push_back(row.at("layer").get<int64_t>());
  return out;
}

double layerValue(const nlohmann::json& summary, int64_t layer, const std::string& key) {
  for (const auto& row : summary.at("layers"))
    if (row.at("layer").get<int64_t>() == layer) return row.contains(key) && row[key].is_number() ? row[key].get<double>() : NAN;
  return NAN;
}

// One line per layer, light to dark from the first layer to the last.
std::string metricFigure(const std::vector<SeriesPoint>& points, const std::string& key, const std::string& title,
                         const std::string& caption) {
  const auto x = steps(points);
  const auto layers = layersOf(points);
  std::vector<Series> lines;
  std::vector<double> all{0};
  for (std::size_t i = 0; i < layers.size(); ++i) {
    Series s{"layer " + std::to_string(layers[i]), x, {}, "", true};
    for (const auto& p : points) s.y.push_back(layerValue(p.summary, layers[i], key));
    all.insert(all.end(), s.y.begin(), s.y.end());
    const double unit = layers.size() > 1 ? 0.9 * static_cast<double>(i) / static_cast<double>(layers.size() - 1) : 0.5;
    s.color = hexColor(colorAt(ColorMap::kSequential, 0.9 - unit));
    lines.push_back(std::move(s));
  }
  return figureElement("fig-series-" + key, caption, {linePlotSvg(lines, {title, "training step", key, 420, 280}, stepAxis(x), fitRange(all))});
}

// Rows: heads (block by block), columns: checkpoints; sqrt(ETC) as in report.html's map.
std::string etcFigure(const std::vector<SeriesPoint>& points) {
  const auto& first = points.front().summary;
  if (!first.contains("heads") || first["heads"].empty()) return "";
  const auto heads = static_cast<Eigen::Index>(first["heads"].size());
  Eigen::MatrixXd etc = Eigen::MatrixXd::Constant(heads, static_cast<Eigen::Index>(points.size()), NAN);
  for (std::size_t c = 0; c < points.size(); ++c) {
    const auto& list = points[c].summary.value("heads", nlohmann::json::array());
    for (Eigen::Index h = 0; h < heads && h < static_cast<Eigen::Index>(list.size()); ++h)
      etc(h, static_cast<Eigen::Index>(c)) = std::sqrt(list[static_cast<std::size_t>(h)].at("etc").get<double>());
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
  if (!points.front().summary.contains("heads")) return "";
  const auto x = steps(points);
  Series local{"local", x, {}, "#b2182b", true}, slow{"slow-decay", x, {}, "#ef8a62", true}, uniform{"uniform", x, {}, "#2166ac", true};
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
  for (const char* key : {"screenot_rank", "lowfreq_energy"})
    for (auto l : layers) out << "<th>" << key << " L" << l << "</th>";
  out << "</tr>";
  for (const auto& p : points) {
    const auto c = headClassCounts(p.summary);
    out << "<tr><td>" << p.step << "</td><td>" << (p.validation_loss ? formatNumber(*p.validation_loss) : "") << "</td><td>"
        << (p.summary.contains("heads") ? std::to_string(c.local) + "/" + std::to_string(c.slow_decay) + "/" + std::to_string(c.uniform) : "")
        << "</td>";
    for (const char* key : {"screenot_rank", "lowfreq_energy"})
      for (auto l : layers) {
        const double v = layerValue(p.summary, l, key);
        out << "<td>" << (std::isfinite(v) ? formatNumber(v) : "") << "</td>";
      }
    out << "</tr>";
  }
  out << "</table></div>";
  return out.str();
}

}  // namespace

HeadClassCounts headClassCounts(const nlohmann::json& summary) {
  HeadClassCounts c;
  for (const auto& h : summary.value("heads", nlohmann::json::array())) {
    const auto kind = h.at("class").get<std::string>();
    c.local += kind == "local";
    c.slow_decay += kind == "slow-decay";
    c.uniform += kind == "uniform";
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
      << metricFigure(points, "screenot_rank", "ScreeNOT rank of P", "ScreeNOT rank of the positional basis of every layer by step.")
      << metricFigure(points, "stable_rank", "Stable rank of P", "Stable rank of the positional basis of every layer by step.")
      << metricFigure(points, "lowfreq_energy", "Low-frequency energy of P",
                      "Share of the positional basis' energy in its lowest DCT frequencies: near 1 once the positions lie on a smooth "
                      "curve (the spiral).")
      << metricFigure(points, "relative_norm", "Relative norm of P", "Share of the hidden states' norm that is position, by layer and step.")
      << "</div></section>\n";
  const std::string heads = etcFigure(points) + classFigure(points);
  if (!heads.empty()) out << "<section id=\"heads\"><h2>Attention heads over training</h2><div class=\"row\">" << heads << "</div></section>\n";
  out << pageEnd();
  return out.str();
}

}  // namespace posgeom::report
