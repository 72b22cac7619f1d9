#include "posgeom/report/head_figures.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>

#include "posgeom/base/log.h"
#include "posgeom/heads/sampled_attention.h"
#include "posgeom/report/layer_figures.h"
#include "posgeom/report/svg_plot.h"

namespace posgeom::report {
namespace {

// Profiles longer than this are averaged down: the shape is what the eye reads.
std::vector<double> shortened(const Eigen::VectorXd& v, Eigen::Index points) {
  std::vector<double> out;
  const Eigen::Index n = std::min(points, v.size());
  for (Eigen::Index i = 0; i < n; ++i) {
    const Eigen::Index a = i * v.size() / n, b = (i + 1) * v.size() / n;
    out.push_back(v.segment(a, b - a).mean());
  }
  return out;
}

}  // namespace

namespace {

// One number of every head as a block x head heatmap (NaN cells left empty).
std::string headGridFigure(const std::vector<heads::HeadReport>& heads, const std::function<double(const heads::HeadReport&)>& value,
                           const std::string& id, const std::string& title, const std::string& caption,
                           const std::string& legend) {
  if (heads.empty()) return "";
  int64_t first = heads.front().block, last = first, width = 0;
  for (const auto& h : heads) first = std::min(first, h.block), last = std::max(last, h.block), width = std::max(width, h.head + 1);
  Eigen::MatrixXd map = Eigen::MatrixXd::Constant(last - first + 1, width, NAN);
  for (const auto& h : heads) map(h.block - first, h.head) = value(h);
  const double side = std::max<double>(static_cast<double>(width) * 12, 200);
  PlotFrame frame{title, "head", "block", static_cast<int>(std::min(side, 900.0)) + 110,
                  static_cast<int>(std::clamp(static_cast<double>(map.rows()) * 14, 160.0, 520.0)) + 60};
  return figureElement(id, caption,
                       {heatmapSvg(map, ColorScale::fit(map, ColorMap::kSequential), frame,
                                   {-0.5, static_cast<double>(width) - 0.5, false},
                                   {static_cast<double>(first) - 0.5, static_cast<double>(last) + 0.5, false}, legend, 256)});
}

}  // namespace

std::string etcMapFigure(const std::vector<heads::HeadReport>& heads) {
  return headGridFigure(
      heads, [](const heads::HeadReport& h) { return std::sqrt(h.etc); }, "fig-etc", "sqrt(ETC) of every head",
      "Square root of the Effective Token Count of each head's positional kernel at the last position: dark "
      "cells are local heads that attend to a few nearby tokens, bright cells spread attention over many.",
      "sqrt(ETC)");
}

std::string kernelTvMapFigure(const std::vector<heads::HeadReport>& heads) {
  return headGridFigure(
      heads, [](const heads::HeadReport& h) { return h.kernel_tv; }, "fig-kernel-tv",
      "How far the attention is from the kernel (kernel_tv)",
      "Mean over queries of the total-variation distance between each head's actual attention on the sampled "
      "sequences (averaged over them) and its positional kernel: dark cells are heads whose attention the kernel "
      "explains, bright ones attend by content.",
      "TV");
}

std::string sinkShareFigure(const std::vector<heads::HeadReport>& heads) {
  if (heads.empty() || !std::isfinite(heads.front().sink_share)) return "";
  std::string named;
  for (const auto& h : heads)
    if (h.sink_share > heads::kSinkHeadAbove) named += (named.empty() ? "" : ", ") + std::to_string(h.block) + "." + std::to_string(h.head);
  return headGridFigure(
      heads, [](const heads::HeadReport& h) { return h.sink_share; }, "fig-sink-share",
      "Weight on the first key (sink_share)",
      "The mean weight the sampled sequences' attention puts on key 0 over the whole softmax (the kernel's "
      "skipped keys in it), from query max(skip, 1) on: bright heads use the first token as an attention sink, "
      "the no-op StreamingLLM found, which the kernel leaves out. Above " +
          log::number("%.1f", heads::kSinkHeadAbove) + ": " + (named.empty() ? std::string("none") : named) + ".",
      "share");
}

std::string learnedSinkShareFigure(const std::vector<heads::HeadReport>& heads) {
  if (heads.empty() || !std::isfinite(heads.front().learned_sink_share)) return "";
  return headGridFigure(
      heads, [](const heads::HeadReport& h) { return h.learned_sink_share; }, "fig-learned-sink-share",
      "Weight sent to the learned sink (learned_sink_share)",
      "Each head's learned sink logit sits in every softmax beside the keys and takes weight without giving a "
      "value: the cell is the mean weight the sampled sequences' attention sends there. Bright heads spend most of "
      "their attention on the sink (they are mostly off); ETC and the windows describe the rest, renormalised.",
      "share");
}

std::string probeFigures(const std::vector<heads::HeadReport>& heads) {
  if (heads.empty() || !std::isfinite(heads.front().induction_score)) return "";
  const auto named = [&heads](double heads::HeadReport::*score) {
    std::string list;
    for (const auto& h : heads)
      if (h.*score > heads::kPatternHeadAbove)
        list += (list.empty() ? "" : ", ") + std::to_string(h.block) + "." + std::to_string(h.head);
    return list.empty() ? std::string("none") : list;
  };
  const std::string above = " Above " + log::number("%.1f", heads::kPatternHeadAbove) + ": ";
  return headGridFigure(
             heads, [](const heads::HeadReport& h) { return h.induction_score; }, "fig-induction",
             "Induction score of every head (repeated random tokens)",
             "On windows of one random stretch repeated three times, the mean attention weight each head puts on the "
             "token after the previous copy of the query's token: bright cells are induction heads." +
                 above + named(&heads::HeadReport::induction_score) + ".",
             "score") +
         headGridFigure(
             heads, [](const heads::HeadReport& h) { return h.previous_token_score; }, "fig-previous-token",
             "Previous-token score of every head (repeated random tokens)",
             "On the same windows, the mean attention weight each head puts on the token just before the query: "
             "bright cells are previous-token heads, which induction heads read." +
                 above + named(&heads::HeadReport::previous_token_score) + ".",
             "score");
}

std::string kernelProfilesFigure(const std::vector<heads::HeadReport>& heads) {
  if (heads.empty()) return "";
  std::map<int64_t, std::vector<const heads::HeadReport*>> by_block;
  for (const auto& h : heads) by_block[h.block].push_back(&h);
  std::vector<std::string> panels;
  for (const auto& [block, hs] : by_block) {
    std::vector<std::vector<double>> curves;
    std::vector<std::string> names;
    for (const auto* h : hs) {
      curves.push_back(shortened(h->profile, 32));  // a 54-pixel panel shows no more
      names.push_back(std::to_string(h->head) + " " + heads::headKindName(h->kind).substr(0, 1));
    }
    panels.push_back(smallMultiplesSvg("Kernels K(i) at the last query, block " + std::to_string(block), "key position i", "K",
                                       curves, names, 16, static_cast<double>(hs.front()->profile.size() - 1)));
  }
  return figureElement("fig-kernels",
                       "Each head's positional kernel over key positions for the last query (one shared scale per block; "
                       "l = local, s = slow-decay, u = uniform): a spike at the right edge is a local head, a flat line a "
                       "uniform one.",
                       panels);
}

std::string kernelMapsFigure(const std::vector<heads::HeadReport>& heads) {
  constexpr std::size_t kMostPanels = 64;
  std::vector<std::string> panels;
  Eigen::Index positions = 0;
  for (const auto& h : heads) {
    if (h.kernel_thumb.size() == 0 || panels.size() == kMostPanels) continue;
    positions = std::max<Eigen::Index>(positions, h.profile.size());
    const AxisRange axis{0, static_cast<double>(h.profile.size()), false};
    panels.push_back(heatmapSvg(h.kernel_thumb, ColorScale::fit(h.kernel_thumb, ColorMap::kSequential),
                                {"L" + std::to_string(h.block) + "H" + std::to_string(h.head), "key", "query"}, axis, axis,
                                "weight", 72));
  }
  if (panels.empty()) return "";
  const std::string shown = panels.size() < heads.size()
                                ? " The first " + std::to_string(panels.size()) + " of " + std::to_string(heads.size()) +
                                      " heads are drawn; --save-kernels writes all of them at full size."
                                : "";
  return figureElement("fig-kernel-maps",
                       "Each head's positional kernel at every query (rows) over the keys (columns), averaged down to at "
                       "most " + std::to_string(heads::kThumbSide) + " cells a side: a bright diagonal band is a local head, "
                       "a bright first column a head that attends to the first token, an even spread a uniform head." +
                           shown,
                       panels);
}

std::string qkMapsFigure(const std::vector<heads::HeadReport>& heads) {
  std::vector<std::string> panels;
  const auto& names = heads::qkMapNames();
  for (const auto& h : heads) {
    if (h.qk_maps.size() != names.size()) continue;
    double bound = 0;
    for (std::size_t i = 0; i + 1 < names.size(); ++i) bound = std::max(bound, h.qk_maps[i].cwiseAbs().maxCoeff());
    const ColorScale logits{ColorMap::kDiverging, -std::max(bound, 1e-12), std::max(bound, 1e-12)};
    const AxisRange positions{0, static_cast<double>(h.qk_maps[0].rows()), false};
    for (std::size_t i = 0; i < names.size(); ++i) {
      const bool attention = i + 1 == names.size();
      const std::string title = "L" + std::to_string(h.block) + "H" + std::to_string(h.head) + " " + names[i];
      panels.push_back(heatmapSvg(h.qk_maps[i], attention ? ColorScale::fit(h.qk_maps[i], ColorMap::kSequential) : logits,
                                  {title, "key position", "query position"}, positions, positions,
                                  attention ? "weight" : "logit", 96));
    }
  }
  if (panels.empty()) return "";
  return figureElement("fig-qk",
                       "Logits of the chosen heads on the first sampled sequence, split into pos-pos, pos-cvec, cvec-pos and "
                       "cvec-cvec parts (one shared diverging scale), their total with any ALiBi bias, and the attention: the "
                       "part whose pattern matches the attention is what drives the head.",
                       panels);
}

std::string qkBasisFigure(const std::vector<heads::HeadReport>& heads) {
  std::vector<std::string> panels;
  for (const auto& h : heads) {
    if (!h.qk_basis) continue;
    const auto& b = *h.qk_basis;
    const std::string name = "L" + std::to_string(h.block) + "H" + std::to_string(h.head);
    for (const auto* m : {&b.standard_corner, &b.kept_corner}) {
      const double bound = std::max(m->size() > 0 ? m->cwiseAbs().maxCoeff() : 0.0, 1e-12);
      const bool standard = m == &b.standard_corner;
      const AxisRange axis{0, static_cast<double>(m->rows()), false};
      panels.push_back(heatmapSvg(*m, {ColorMap::kDiverging, -bound, bound},
                                  {name + (standard ? " W_QK, standard basis" : " rest, positional basis, thresholded"),
                                   standard ? "dim" : "direction", standard ? "dim" : "direction"},
                                  axis, axis, "W_QK", 120));
    }
  }
  if (panels.empty()) return "";
  return figureElement(
      "fig-qk-basis",
      "The chosen heads' W_QK = W_Q W_K^T / sqrt(d_head), top-left " + std::to_string(heads::kQkCornerSide) + " x " +
          std::to_string(heads::kQkCornerSide) + " (as the paper's Fig. 5): in the standard basis, where a bright "
          "diagonal is the part that matches a token with itself, and the rest (diagonal removed) in the basis of "
          "the positional basis' right singular vectors, with entries below sqrt(2 log m^2) times their root mean "
          "square set to zero: what survives in the top-left block is how the head reads positions.",
      panels);
}

std::string ropeBandsFigure(const std::vector<heads::HeadReport>& heads) {
  std::map<int64_t, std::vector<const heads::HeadReport*>> by_block;
  for (const auto& h : heads)
    if (h.rope_bands) by_block[h.block].push_back(&h);
  if (by_block.empty()) return "";
  std::vector<std::string> panels;
  std::map<std::string, int> masses;
  const bool sampled = !by_block.begin()->second.front()->rope_bands->attention_mass.empty();
  for (const auto& [block, hs] : by_block) {
    const auto bands = static_cast<Eigen::Index>(hs.front()->rope_bands->bands.size());
    Eigen::MatrixXd kernel(bands, static_cast<Eigen::Index>(hs.size())), attention(kernel.rows(), kernel.cols());
    for (std::size_t i = 0; i < hs.size(); ++i) {
      const auto& r = *hs[i]->rope_bands;
      kernel.col(static_cast<Eigen::Index>(i)) = r.kernel_share;
      attention.col(static_cast<Eigen::Index>(i)) = r.attention_share;
      if (!r.kernel_mass.empty()) ++masses[r.kernel_mass];
    }
    const AxisRange head_axis{-0.5, static_cast<double>(hs.size()) - 0.5, false}, band_axis{-0.5, static_cast<double>(bands) - 0.5, false};
    const ColorScale shares{ColorMap::kSequential, 0, 1};
    const std::string name = "block " + std::to_string(block);
    const int pixels = std::max(96, static_cast<int>(hs.size()));  // a column a head (DeepSeek-V3 has 128)
    panels.push_back(heatmapSvg(kernel, shares, {name + ": kernel", "head", "band"}, head_axis, band_axis, "share", pixels));
    if (sampled)
      panels.push_back(heatmapSvg(attention, shares, {name + ": attention", "head", "band"}, head_axis, band_axis, "share", pixels));
  }
  std::string counts;
  for (const auto& [mass, count] : masses) counts += (counts.empty() ? "" : ", ") + std::to_string(count) + " " + mass;
  const auto& first = *by_block.begin()->second.front()->rope_bands;
  const bool unturned = first.unturned_band;
  return figureElement(
      "fig-rope-bands",
      "Where in RoPE's frequencies each rotary head's logits lie: q . k split into its rotation pairs, the pairs in " +
          std::to_string(first.bands.size() - (unturned ? 1 : 0)) + " bands of consecutive pairs from the fastest-turning "
          "(band 0, top) to the slowest" + (unturned ? std::string(", the dims RoPE leaves unturned in the last row") : "") +
          "; each cell is the band's share of what the logits of the positional kernel vary by over a query's keys" +
          (sampled ? std::string(" (panels '...: kernel') and of the sampled sequences' attention ('...: attention')") : std::string()) +
          ". Barbero et al. (2025) find positional heads in the fast bands and a semantic channel in the slow ones. "
          "Kernels by where their mass lies (over " + log::number("%.0f", 100 * heads::kRopeMassAbove) +
          "% in one half): " + (counts.empty() ? std::string("none varies") : counts) + "; rope_bands.csv has every number, summary.json the ETC of the kernel "
          "from the fastest and the slowest band alone.",
      panels);
}

}  // namespace posgeom::report
