#include "posgeom/report/layer_figures.h"

#include <algorithm>
#include <cmath>

#include "posgeom/base/log.h"
#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

constexpr int kPanelPixels = 64;  // heatmap resolution per panel: a Llama-2-7B page stays small

std::string layerTitle(const std::string& what, int64_t layer) { return what + ", layer " + std::to_string(layer); }

std::vector<double> column(const std::vector<LayerRow>& rows, const char* key) {
  std::vector<double> out;
  for (const auto& r : rows) out.push_back(r.number(key));
  return out;
}

AxisRange layerAxis(const std::vector<double>& layers) {
  if (layers.empty()) return {0, 1, false};
  return {layers.front() - 0.5, std::max(layers.back() + 0.5, layers.front() + 0.5), false};
}

}  // namespace

std::string figureElement(const std::string& id, const std::string& caption, const std::vector<std::string>& panels) {
  std::string out = "<figure id=\"" + id + "\"><div class=\"panels\">";
  for (const auto& p : panels) out += p;
  return out + "</div><figcaption>" + escapeXml(caption) + "</figcaption></figure>\n";
}

std::string gramFigure(const std::vector<metrics::LayerMetrics>& layers) {
  std::vector<std::string> panels;
  for (const auto& m : layers) {
    const AxisRange positions{0, static_cast<double>(m.gram.rows()), false};
    panels.push_back(heatmapSvg(m.gram, {ColorMap::kDiverging, -1, 1}, {layerTitle("Gram of P", m.layer), "position", "position"},
                                positions, positions, "cosine", kPanelPixels));
  }
  return figureElement("fig-gram",
                       "Cosine between positional basis vectors pos_t and pos_t': a smooth band along the diagonal means "
                       "nearby positions look alike, the low-rank, low-frequency structure of the positional basis.",
                       panels);
}

std::string combinedGramFigure(const std::vector<metrics::LayerMetrics>& layers) {
  std::vector<std::string> panels;
  for (const auto& m : layers) {
    const double n = static_cast<double>(m.combined_gram.rows());
    panels.push_back(heatmapSvg(m.combined_gram, {ColorMap::kDiverging, -1, 1},
                                {layerTitle("Gram of [P; C]", m.layer), "row of [P; C]", "row of [P; C]"}, {0, n, false},
                                {0, n, false}, "cosine", kPanelPixels));
  }
  return figureElement("fig-combined-gram",
                       "Cosines within and between the positional basis (first rows, up to 128 positions) and context basis "
                       "(last rows, up to 64 sequences): an off-diagonal block near zero is the incoherence of position and context.",
                       panels);
}

std::string spiralFigure(const std::vector<metrics::LayerMetrics>& layers) {
  std::vector<std::string> panels;
  for (const auto& m : layers) {
    if (m.spiral.cols() < 2) continue;
    PointSet background{"cvec", {}, {}, {"#9a9a9a"}, 0.8, 0.45, true};
    const Eigen::Index stride = std::max<Eigen::Index>(1, m.reservoir_cvec.rows() / 200);  // a couple of hundred points suffice
    for (Eigen::Index i = 0; i < m.reservoir_cvec.rows(); i += stride) {
      background.x.push_back(m.reservoir_cvec(i, 0));
      background.y.push_back(m.reservoir_cvec(i, 1));
    }
    PointSet spiral{"", {}, {}, {}, 1.8, 1.0};
    const ColorScale scale{ColorMap::kSequential, 0, static_cast<double>(std::max<Eigen::Index>(1, m.spiral.rows() - 1))};
    const Eigen::Index step = std::max<Eigen::Index>(1, m.spiral.rows() / 96);
    for (Eigen::Index t = 0; t < m.spiral.rows(); t += step) {
      spiral.x.push_back(m.spiral(t, 0));
      spiral.y.push_back(m.spiral(t, 1));
      spiral.colors.push_back(hexColor(scale.color(static_cast<double>(t))));
    }
    std::vector<double> xs = spiral.x, ys = spiral.y;
    xs.insert(xs.end(), background.x.begin(), background.x.end());
    ys.insert(ys.end(), background.y.begin(), background.y.end());
    panels.push_back(scatterSvg({background, spiral}, {layerTitle("Top PCs of P", m.layer), "PC 1", "PC 2"}, fitRange(xs),
                                fitRange(ys), &scale, "position", {scale.lo, scale.hi, false}));
  }
  return figureElement("fig-spiral",
                       "The positional basis on its top two principal components, coloured by position, with the context "
                       "vectors of a few sequences behind it in grey: a smooth curve traced in order is position encoded on a "
                       "low-dimensional spiral, standing apart from the context cloud.",
                       panels);
}

std::string singularValuesFigure(const std::vector<metrics::LayerMetrics>& layers) {
  std::vector<std::string> panels;
  for (const auto& m : layers) {
    std::vector<Series> series;
    std::vector<double> all;
    const std::pair<const Eigen::VectorXd*, std::pair<const char*, const char*>> parts[] = {
        {&m.singular_pos, {"P", "#2166ac"}}, {&m.singular_cvec, {"cvec", "#b2182b"}}, {&m.singular_resid, {"resid", "#7b7b7b"}}};
    for (const auto& [values, style] : parts) {
      Series s{style.first, {}, {}, style.second, false};
      for (Eigen::Index i = 0; i < std::min<Eigen::Index>(values->size(), 64); ++i) {
        s.x.push_back(static_cast<double>(i + 1));
        s.y.push_back((*values)[i]);
      }
      all.insert(all.end(), s.y.begin(), s.y.end());
      if (!s.x.empty()) series.push_back(std::move(s));
    }
    if (m.screenot.threshold > 0) {
      series.push_back({"ScreeNOT", {1, 64}, {m.screenot.threshold, m.screenot.threshold}, "#e08214", false});
      all.push_back(m.screenot.threshold);
    }
    panels.push_back(linePlotSvg(series, {layerTitle("Singular values", m.layer), "index", "singular value"}, {0.5, 64.5, false},
                                 fitRange(all, true)));
  }
  return figureElement("fig-singular-values",
                       "Singular values of the positional basis P, the context vectors cvec and the residuals resid (log "
                       "scale): a few large values of P above the ScreeNOT threshold, then a sharp drop, is its low rank.",
                       panels);
}

std::string massiveActivationsFigure(const std::vector<metrics::LayerMetrics>& layers) {
  constexpr std::size_t kDrawn = 3;  // the largest dimensions drawn per layer
  const char* colors[kDrawn] = {"#b2182b", "#2166ac", "#1b7837"};
  std::vector<std::string> panels;
  std::string named;
  for (const auto& m : layers) {
    if (!m.massive) continue;
    const auto& a = *m.massive;
    std::vector<Series> series;
    std::vector<double> all{a.median_abs};
    const auto t = static_cast<double>(a.top_by_position.cols());
    for (std::size_t r = 0; r < std::min(kDrawn, a.top.size()); ++r) {
      Series s{"dim " + std::to_string(a.top[r].dim), {}, {}, colors[r], false};
      for (Eigen::Index p = 0; p < a.top_by_position.cols(); ++p) {
        s.x.push_back(static_cast<double>(p + 1));  // log scale: the first positions, where they are, get room
        s.y.push_back(a.top_by_position(static_cast<Eigen::Index>(r), p));
      }
      all.insert(all.end(), s.y.begin(), s.y.end());
      series.push_back(std::move(s));
    }
    // Every massive one among the reported top dimensions, drawn or not, and how many more.
    int64_t listed = 0;
    for (const auto& d : a.top)
      if (d.massive) {
        named += (named.empty() ? "" : ", ") + std::to_string(m.layer) + ":" + std::to_string(d.dim) + "@" + std::to_string(d.position);
        ++listed;
      }
    if (a.massive_count > listed) named += " and " + std::to_string(a.massive_count - listed) + " more in layer " + std::to_string(m.layer);
    const double cut = metrics::kMassiveTimesMedian * a.median_abs;
    series.push_back({"median", {1, t}, {a.median_abs, a.median_abs}, "#7b7b7b", false});
    series.push_back({log::number("%.0f", metrics::kMassiveTimesMedian) + "x median", {1, t}, {cut, cut}, "#e08214", false});
    all.push_back(cut);
    panels.push_back(linePlotSvg(series, {layerTitle("Largest |h| by position", m.layer), "position + 1", "max |h| over windows"},
                                 {0.9, t * 1.1, true}, fitRange(all, true)));
  }
  if (panels.empty()) return "";
  return figureElement(
      "fig-massive-activations",
      "Massive activations: each layer's three largest dimensions, their largest |h| over the windows at every position "
      "(every position, skipped ones too; both axes log scale, position 0 at 1), beside the layer's median |h| and " +
          log::number("%.0f", metrics::kMassiveTimesMedian) +
          " times it. A dimension far above the rest at one or two positions (position 0, a first delimiter) is a massive "
          "activation (Sun et al. 2024). Massive here (layer:dim@position): " +
          (named.empty() ? std::string("none") : named) + ".",
      panels);
}

std::string dctFigure(const std::vector<metrics::LayerMetrics>& layers, int k) {
  std::vector<std::string> panels;
  for (const auto& m : layers) {
    const Eigen::Index n = std::min<Eigen::Index>(k, m.gram_dct.rows());
    const Eigen::MatrixXd block = m.gram_dct.topLeftCorner(n, n);
    panels.push_back(heatmapSvg(block, ColorScale::fit(block, ColorMap::kDiverging),
                                {layerTitle("DCT of the Gram", m.layer), "frequency", "frequency"},
                                {-0.5, static_cast<double>(n) - 0.5, false}, {-0.5, static_cast<double>(n) - 0.5, false},
                                "coefficient", static_cast<int>(n)));
  }
  return figureElement("fig-dct",
                       "The top-left 10 x 10 coefficients of the Gram's orthonormal 2-D DCT: weight concentrated in the "
                       "top-left corner means the Gram varies smoothly with position (low frequencies).",
                       panels);
}

std::string layerCosinesFigure(const std::vector<metrics::LayerMetrics>& layers) {
  const auto cosines = metrics::layerCosines(layers);
  if (cosines.layers.empty()) return "";
  const auto n = static_cast<double>(cosines.layers.size());
  // Consecutive hidden states (--layer all) are labelled by their numbers, a selection by its order.
  const bool consecutive = cosines.layers.back() - cosines.layers.front() + 1 == static_cast<int64_t>(cosines.layers.size());
  const double first = consecutive ? static_cast<double>(cosines.layers.front()) : 0.0;
  const AxisRange axis{first - 0.5, first + n - 0.5, false};
  const std::string label = consecutive ? "hidden state" : "layer (in the order below)";
  const auto pixels = std::max(96, static_cast<int>(cosines.layers.size()));
  std::string order;
  for (const int64_t l : cosines.layers) order += (order.empty() ? "" : ", ") + std::to_string(l);
  return figureElement(
      "fig-layer-cosines",
      "The mean cosine, token by token, between the hidden states of every pair of layers on random tokens (the "
      "paper's Appendix B.2): a bright band along the diagonal is the residual stream, each block adding to what "
      "the layer before holds. Rows and columns are hidden states " + order + ".",
      {heatmapSvg(cosines.cosine, {ColorMap::kDiverging, -1, 1}, {"Cosine between layers", label, label}, axis,
                  axis, "cosine", pixels)});
}

std::string normsFigure(const RunSummary& summary) {
  const auto rows = summary.layers();
  const auto layers = column(rows, keys::kLayer), norms = column(rows, keys::kMeanHiddenNorm);
  return figureElement("fig-norms", "Mean norm of the hidden states by layer: how the residual stream grows through the network.",
                       {linePlotSvg({{"", layers, norms, "#2166ac", true}}, {"Mean hidden-state norm", "layer", "mean |h|"},
                                    layerAxis(layers), fitRange(norms))});
}

std::string similarityFigure(const RunSummary& summary) {
  const auto rows = summary.layers();
  const auto layers = column(rows, keys::kLayer), previous = column(rows, keys::kPreviousLayerCosine);
  std::vector<double> to, basis;
  for (const auto& c : summary.crossLayer()) {
    to.push_back(c.to);
    basis.push_back(c.basis_cosine);
  }
  return figureElement("fig-similarity",
                       "Cosine of each layer's positional basis with the previous layer's, and the mean cosine of each hidden "
                       "state with the previous layer's: how much each block rewrites position and content.",
                       {linePlotSvg({{"basis P", to, basis, "#2166ac", true}, {"hidden h", layers, previous, "#b2182b", true}},
                                    {"Cross-layer similarity", "layer", "cosine"}, layerAxis(layers), {-1.05, 1.05, false})});
}

std::string ranksFigure(const RunSummary& summary) {
  const auto rows = summary.layers();
  const auto layers = column(rows, keys::kLayer), screenot = column(rows, keys::kScreenotRank), stable = column(rows, keys::kStableRank);
  std::vector<double> both = screenot;
  both.insert(both.end(), stable.begin(), stable.end());
  both.push_back(0);
  return figureElement("fig-ranks",
                       "ScreeNOT rank and stable rank of the positional basis by layer: position lives in a low-dimensional "
                       "subspace when both stay small against the width.",
                       {linePlotSvg({{"ScreeNOT", layers, screenot, "#2166ac", true}, {"stable", layers, stable, "#b2182b", true}},
                                    {"Rank of P", "layer", "rank"}, layerAxis(layers), fitRange(both))});
}

}  // namespace posgeom::report
