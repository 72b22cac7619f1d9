#include "posgeom/pipeline/heads_stage.h"

#include <spdlog/spdlog.h>

#include <chrono>

#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/base/progress.h"

namespace posgeom::pipeline {

nlohmann::json headSettingsJson(const heads::HeadOptions& o, int64_t samples) {
  return {{"kernel_skip", o.kernel_skip},
          {"query", heads::queryModeName(o.query)},
          {"samples", samples},
          {"local_below", o.thresholds.local},
          {"uniform_above", o.thresholds.uniform},
          {"contextual_cv_below", o.contextual_cv}};
}

heads::HeadOptions headOptionsFromSettings(const nlohmann::json& settings, const heads::HeadOptions& defaults) {
  heads::HeadOptions o = defaults;
  if (!settings.is_object()) return o;
  o.kernel_skip = settings.value("kernel_skip", o.kernel_skip);
  o.query = heads::parseQueryMode(settings.value("query", heads::queryModeName(o.query)));
  o.thresholds.local = settings.value("local_below", o.thresholds.local);
  o.thresholds.uniform = settings.value("uniform_above", o.thresholds.uniform);
  o.contextual_cv = settings.value("contextual_cv_below", o.contextual_cv);
  return o;
}

std::vector<heads::HeadReport> analyzeHeads(const model::Model& model, const anova::AnalysisState& state,
                                            const heads::HeadOptions& options, bool causal) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& config = model.config();
  const auto slopes = model.alibiSlopes();
  std::vector<heads::HeadReport> out;
  for (const auto& [layer, head] : options.qk_maps) {
    bool analysed = false;
    for (const auto& l : state.layers) analysed = analysed || (l.layer == layer && l.attention_input_sum.size() > 0);
    if (!analysed || head >= config.num_heads)
      throw InputError("--qk-heads", std::to_string(layer) + "." + std::to_string(head) +
                                         " is not an analysed head (layers >= 1 among --layer, heads below " +
                                         std::to_string(config.num_heads) + ")");
  }
  int64_t blocks = 0, done = 0;
  for (const auto& layer : state.layers) blocks += layer.attention_input_sum.size() > 0;
  ProgressLine progress("heads", blocks, "layers");
  for (const auto& layer : state.layers) {
    if (layer.attention_input_sum.size() == 0) continue;
    progress.update(done++, 0, "layer " + std::to_string(layer.layer));
    if (layer.attention_input_sum.cols() != config.hidden_size || layer.layer > config.num_layers)
      throw InputError("--model", "does not match the state's layer " + std::to_string(layer.layer));
    heads::BlockHeads block;
    block.layer = layer.layer;
    block.means = layer.attention_input_sum / static_cast<double>(layer.sequences);
    block.samples = layer.attention_samples;
    const auto maps = model.queryKeyMaps(layer.layer - 1);
    for (int64_t h = 0; h < config.num_heads; ++h) {
      block.maps.push_back({anova::toEigen(maps.wq[h]), anova::toEigen(maps.bq[h]), anova::toEigen(maps.wk[h])});
      heads::KernelSettings k;
      k.causal = causal;
      if (slopes.defined()) k.alibi_slope = slopes[h].item<double>();
      if (config.positions == model::PositionScheme::kRope) k.rope_theta = config.rope_theta;
      block.kernel.push_back(k);
    }
    auto reports = heads::analyzeBlock(block, options);
    out.insert(out.end(), std::make_move_iterator(reports.begin()), std::make_move_iterator(reports.end()));
  }
  progress.finish();
  spdlog::info("{} heads analysed in {:.1f} s", out.size(),
               std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  return out;
}

}  // namespace posgeom::pipeline
