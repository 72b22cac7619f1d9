#include "posgeom/pass/heads_stage.h"

#include <chrono>
#include <memory>

#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/progress.h"
#include "pass_model.h"

namespace posgeom::pass {
namespace {

// The numbers a state records of the heads options, each key beside its field: written
// and read back from this one list.
template <typename Options, typename Visit>
void forEachHeadNumber(Options& o, Visit visit) {
  visit("kernel_skip", o.kernel_skip);
  visit("local_below", o.thresholds.local);
  visit("uniform_above", o.thresholds.uniform);
  visit("contextual_cv_below", o.contextual_cv);
}

}  // namespace

nlohmann::json headSettingsJson(const heads::HeadOptions& o, int64_t samples) {
  nlohmann::json s{{"query", heads::queryModeName(o.query)}, {"samples", samples}};
  forEachHeadNumber(o, [&s](const char* key, const auto& value) { s[key] = value; });
  if (o.repeat_period > 0) s["repeat_period"] = o.repeat_period;
  return s;
}

heads::HeadOptions headOptionsFromSettings(const nlohmann::json& settings, const heads::HeadOptions& defaults) {
  heads::HeadOptions o = defaults;
  if (!settings.is_object()) return o;
  forEachHeadNumber(o, [&settings](const char* key, auto& value) { value = settings.value(key, value); });
  o.query = heads::parseQueryMode(settings.value("query", heads::queryModeName(o.query)));
  o.repeat_period = settings.value("repeat_period", o.repeat_period);
  return o;
}

namespace {

// OLMo-2's q/k norms over all heads (null for other models): every head's maps stacked, the
// keys' once per key-value head (the maps repeat them for each query head of its group).
// DeepSeek's latent norms: the latent maps themselves.
std::shared_ptr<const heads::JointQkNorm> jointNorm(const model::QueryKeyMaps& maps, const model::ModelConfig& config) {
  if (maps.k_latent.defined()) {
    auto joint = std::make_shared<heads::JointQkNorm>();
    joint->wk = anova::toEigen(maps.k_latent), joint->bk = anova::toEigen(maps.k_latent_bias);
    joint->k_unscaled = maps.k_unscaled;
    if (maps.q_latent.defined())
      joint->wq = anova::toEigen(maps.q_latent), joint->bq = anova::toEigen(maps.q_latent_bias);
    else
      joint->q_unscaled = maps.wq.size(1);
    return joint;
  }
  if (!maps.joint_norm) return nullptr;
  const int64_t h = config.num_heads, dh = config.headDim(), d = config.hidden_size, kv = config.num_kv_heads;
  auto per_key_head = [&](const at::Tensor& t) { return t.reshape({kv, h / kv, -1}).select(1, 0).reshape({kv * dh, -1}); };
  return std::make_shared<const heads::JointQkNorm>(
      heads::JointQkNorm{anova::toEigen(maps.wq.reshape({h * dh, d})), anova::toEigen(per_key_head(maps.wk.reshape({h, dh * d}))),
                         anova::toEigen(maps.bq.reshape({h * dh})), anova::toEigen(per_key_head(maps.bk).reshape({kv * dh}))});
}

}  // namespace

std::vector<heads::HeadReport> analyzeHeads(const PassModel& pass_model, const anova::StateLayers& layers,
                                            const heads::HeadOptions& options, bool causal) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& model = pass_model.model();
  const auto& config = model.config();
  int64_t blocks = 0, done = 0;
  for (std::size_t i = 0; i < layers.size(); ++i) blocks += layers.shape(i).attention_inputs;
  ProgressLine progress("heads", blocks, "blocks");
  std::vector<heads::HeadReport> out;
  for (std::size_t i = 0; i < layers.size(); ++i) {
    if (!layers.shape(i).attention_inputs) continue;
    const auto held = layers.at(i);
    const auto& layer = *held;
    // The state keeps block b's attention inputs beside the hidden state it writes, b + 1.
    const int64_t block_index = layer.layer - 1;
    progress.update(done++, 0, "block " + std::to_string(block_index));
    if (layer.attention_input_sum.cols() != config.hidden_size || layer.layer > config.num_layers)
      throw InputError(option::kModel, "does not match the state's layer " + std::to_string(layer.layer));
    heads::BlockHeads block;
    block.block = block_index;
    block.means = layer.attention_input_sum / static_cast<double>(layer.sequences);
    block.samples = layer.attention_samples;
    const auto maps = model.queryKeyMaps(block_index);
    auto positions = model.kernelPositions(block_index, block.means.rows());
    // The run's mask, which a run may set apart from the model's (causal on a bidirectional model).
    positions.shared.mask.causal = causal;
    const bool normed = maps.q_norm.defined() || maps.k_latent.defined();
    const auto joint = jointNorm(maps, config);
    // The key bias only where keys rotate, where the head's norm or clamp makes it nonlinear
    // in its inputs, or where it meets a relative position's query (DeBERTa's p2c): elsewhere
    // it cancels in the softmax (HeadMaps).
    const bool key_bias = !positions.shared.rope.inverse_frequencies.empty() || normed || maps.clip > 0 ||
                          !positions.relative_vectors.empty();
    for (int64_t h = 0; h < config.num_heads; ++h) {
      heads::HeadMaps head{anova::toEigen(maps.wq[h]), anova::toEigen(maps.bq[h]), anova::toEigen(maps.wk[h]),
                           key_bias ? Eigen::VectorXd(anova::toEigen(maps.bk[h])) : Eigen::VectorXd()};
      if (maps.q_norm.defined()) {
        head.q_norm = anova::toEigen(maps.q_norm[h]);
        head.k_norm = anova::toEigen(maps.k_norm[h]);
      }
      head.norm_eps = maps.norm_eps;
      head.clip = maps.clip;
      head.joint = joint;
      block.maps.push_back(std::move(head));
      heads::KernelSettings k;
      k.positions = positions.head(h);
      block.kernel.push_back(std::move(k));
    }
    auto reports = heads::analyzeBlock(block, options);
    out.insert(out.end(), std::make_move_iterator(reports.begin()), std::make_move_iterator(reports.end()));
  }
  progress.finish();
  log::info(std::to_string(out.size()) + " heads analysed in " +
            log::number("%.1f", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) + " s");
  return out;
}

}  // namespace posgeom::pass
