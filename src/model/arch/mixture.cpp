#include "mixture.h"

#include <limits>

#include <nlohmann/json.hpp>

#include "posgeom/io/json_file.h"
#include "posgeom/model/ops.h"

namespace posgeom::model::mixture {

const ExpertNames& mixtralNames() {
  static const ExpertNames names{"block_sparse_moe.", "w1", "w3", "w2"};
  return names;
}

const ExpertNames& qwenNames() {
  static const ExpertNames names{"mlp.", "gate_proj", "up_proj", "down_proj"};
  return names;
}

const ExpertNames& gptOssNames() {
  static const ExpertNames names{"mlp.", "", "", "", "router", true};
  return names;
}

const ExpertNames& deepseekNames() {
  static const ExpertNames names{"mlp.", "gate_proj", "up_proj", "down_proj", "gate", false, "shared_experts", false};
  return names;
}

void readConfig(const io::JsonConfig& c, ModelConfig& m, const Keys& keys) {
  auto& moe = m.moe;
  moe.experts = keys.experts_alias ? c.positiveInt({keys.experts, keys.experts_alias}, keys.experts_default)
                                   : c.positiveInt({keys.experts}, keys.experts_default);
  moe.experts_per_token = c.positiveInt({"num_experts_per_tok"}, keys.per_token_default);
  if (moe.experts_per_token > moe.experts)
    c.fail("num_experts_per_tok (" + std::to_string(moe.experts_per_token) + ") is more than the " +
           std::to_string(moe.experts) + " experts (" + keys.experts + ")");
  moe.expert_size = c.positiveInt({keys.expert_size}, m.intermediate_size);
  moe.normalize_top_k = keys.normalize_key ? c.boolean({"norm_topk_prob"}, keys.normalize_default) : keys.normalize_default;
  if (!keys.qwen_layers) return;
  // Qwen: block i is dense when listed in mlp_only_layers or when i + 1 is not a multiple of
  // decoder_sparse_step.
  const int64_t step = c.positiveInt({"decoder_sparse_step"}, 1);
  moe.dense_blocks.assign(static_cast<size_t>(m.num_layers), false);
  for (int64_t i = 0; i < m.num_layers; ++i) moe.dense_blocks[static_cast<size_t>(i)] = (i + 1) % step != 0;
  const auto& j = c.json();
  if (!j.contains("mlp_only_layers") || j["mlp_only_layers"].is_null()) return;
  if (!j["mlp_only_layers"].is_array()) c.fail("mlp_only_layers must be a list of block indices");
  for (const auto& b : j["mlp_only_layers"]) {
    if (!b.is_number_integer() || b.get<int64_t>() < 0 || b.get<int64_t>() >= m.num_layers)
      c.fail("mlp_only_layers entry " + b.dump() + " is not a block index in 0.." + std::to_string(m.num_layers - 1));
    moe.dense_blocks[static_cast<size_t>(b.get<int64_t>())] = true;
  }
}

void writeConfig(const ModelConfig& m, nlohmann::json& j, const Keys& keys) {
  j[keys.experts] = m.moe.experts;
  j["num_experts_per_tok"] = m.moe.experts_per_token;
  j[keys.expert_size] = m.moe.expert_size;
  if (keys.normalize_key) j["norm_topk_prob"] = m.moe.normalize_top_k;
  if (!keys.qwen_layers) return;
  j["decoder_sparse_step"] = 1;
  j["mlp_only_layers"] = nlohmann::json::array();
  for (int64_t i = 0; i < m.num_layers; ++i)
    if (!m.moe.sparse(i)) j["mlp_only_layers"].push_back(i);
}

MixtureOfExperts randomShape(bool weights_in_compute_dtype, bool shared_expert) {
  MixtureOfExperts moe;
  moe.experts = 4;
  moe.experts_per_token = 2;
  moe.weights_in_compute_dtype = weights_in_compute_dtype;
  moe.shared_expert_size = shared_expert ? 1 : 0;  // configForShape makes it the shape's intermediate size
  return moe;
}

void addTensors(TensorSpecs& specs, const std::string& layer_prefix, const ModelConfig& m, const ExpertNames& names) {
  const auto& moe = m.moe;
  const int64_t d = m.hidden_size, f = moe.expert_size;
  const auto prefix = layer_prefix + names.module;
  const double share = static_cast<double>(moe.experts_per_token) / static_cast<double>(moe.experts);
  specs.weight(prefix + names.router + ".weight", {moe.experts, d});
  if (moe.biases) specs.bias(prefix + names.router + ".bias", moe.experts);
  if (moe.sigmoid_scores) specs.bias(prefix + names.router + ".e_score_correction_bias", moe.experts).inFloat32();
  if (names.fused) {
    specs.expert(prefix + "experts.gate_up_proj", {moe.experts, d, 2 * f}, share)
        .expert(prefix + "experts.gate_up_proj_bias", {moe.experts, 2 * f}, share)
        .expert(prefix + "experts.down_proj", {moe.experts, f, d}, share)
        .expert(prefix + "experts.down_proj_bias", {moe.experts, d}, share);
    return;
  }
  for (int64_t e = 0; e < moe.experts; ++e) {
    const auto expert = prefix + "experts." + std::to_string(e) + ".";
    specs.expert(expert + names.gate + ".weight", {f, d}, share)
        .expert(expert + names.up + ".weight", {f, d}, share)
        .expert(expert + names.down + ".weight", {d, f}, share);
  }
  if (moe.shared_expert_size == 0) return;
  const int64_t s = moe.shared_expert_size;
  const auto shared = prefix + names.shared + ".";
  specs.weight(shared + "gate_proj.weight", {s, d}).weight(shared + "up_proj.weight", {s, d}).weight(shared + "down_proj.weight", {d, s});
  if (names.shared_gate) specs.weight(prefix + names.shared + "_gate.weight", {1, d});
}

Mixture load(const Weights& w, const std::string& layer_prefix, const ModelConfig& m, const ExpertNames& names) {
  const auto prefix = layer_prefix + names.module;
  Mixture mixture;
  mixture.router = w.get(prefix + names.router + ".weight");
  if (m.moe.biases) mixture.router_bias = w.get(prefix + names.router + ".bias");
  if (m.moe.sigmoid_scores) mixture.score_correction = w.get(prefix + names.router + ".e_score_correction_bias");
  if (names.fused) {
    // [in, out] per expert: its transposes are the [out, in] maps; gate and up interleave.
    const auto gate_up = w.get(prefix + "experts.gate_up_proj"), gate_up_bias = w.get(prefix + "experts.gate_up_proj_bias");
    const auto down = w.get(prefix + "experts.down_proj"), down_bias = w.get(prefix + "experts.down_proj_bias");
    const int64_t two_f = gate_up.size(2);
    for (int64_t e = 0; e < m.moe.experts; ++e) {
      const auto rows = gate_up[e].t();
      mixture.experts.push_back({rows.slice(0, 0, two_f, 2).contiguous(), rows.slice(0, 1, two_f, 2).contiguous(),
                                 down[e].t().contiguous(), gate_up_bias[e].slice(0, 0, two_f, 2).contiguous(),
                                 gate_up_bias[e].slice(0, 1, two_f, 2).contiguous(), down_bias[e]});
    }
    return mixture;
  }
  for (int64_t e = 0; e < m.moe.experts; ++e) {
    const auto expert = prefix + "experts." + std::to_string(e) + ".";
    mixture.experts.push_back(
        {w.get(expert + names.gate + ".weight"), w.get(expert + names.up + ".weight"), w.get(expert + names.down + ".weight")});
  }
  if (m.moe.shared_expert_size > 0) {
    const auto shared = prefix + names.shared + ".";
    mixture.shared = {w.get(shared + "gate_proj.weight"), w.get(shared + "up_proj.weight"), w.get(shared + "down_proj.weight")};
    if (names.shared_gate) mixture.shared_gate = w.get(prefix + names.shared + "_gate.weight");
  }
  return mixture;
}

at::Tensor gatedMlp(const Expert& e, const at::Tensor& x, const std::string& activation, const Numerics& num) {
  const auto gate = ops::activation(activation, ops::linear(x, e.gate, {}, num), num);
  return ops::linear(num.round(gate * ops::linear(x, e.up, {}, num)), e.down, {}, num);
}

namespace {

// gpt-oss's expert: (clamp(up, -limit, limit) + 1) g sigmoid(alpha g) for g = min(gate, limit),
// each op's result in the activations' dtype, as transformers computes it.
at::Tensor clampedSwiglu(const Expert& e, const at::Tensor& x, const MixtureOfExperts& moe, const Numerics& num) {
  const auto gate = ops::linear(x, e.gate, e.gate_bias, num).clamp_max(moe.swiglu_limit);
  const auto up = ops::linear(x, e.up, e.up_bias, num).clamp(-moe.swiglu_limit, moe.swiglu_limit);
  const auto glu = num.round(gate * num.round(at::sigmoid(num.round(gate * moe.swiglu_alpha))));
  return ops::linear(num.round(num.round(up + 1) * glu), e.down, e.down_bias, num);
}

// Which experts each token takes [N, k] and their weights.
struct Routing {
  at::Tensor weights, chosen;
};

// DeepSeek's (MixtureOfExperts::grouped_routing), in float32 as transformers routes.
Routing groupedRoute(const Mixture& mixture, const at::Tensor& tokens, const MixtureOfExperts& moe) {
  const auto logits = at::linear(tokens.to(at::kFloat), mixture.router.to(at::kFloat));
  const auto scores = moe.sigmoid_scores ? at::sigmoid(logits) : at::softmax(logits, -1);
  auto choice = mixture.score_correction.defined() ? scores + mixture.score_correction.to(at::kFloat) : scores;
  if (moe.groups > 1) {
    const auto grouped = choice.view({-1, moe.groups, moe.experts / moe.groups});
    const auto group_scores = moe.sigmoid_scores ? std::get<0>(grouped.topk(2, -1)).sum(-1) : std::get<0>(grouped.max(-1));
    const auto kept = at::zeros_like(group_scores, at::kBool).scatter_(1, std::get<1>(group_scores.topk(moe.top_groups, -1)), true);
    // Out of the race: below every score (V3's -inf), or V2's zero, below every probability.
    const double out = moe.sigmoid_scores ? -std::numeric_limits<double>::infinity() : 0.0;
    choice = grouped.masked_fill(kept.logical_not().unsqueeze(-1), out).view({-1, moe.experts});
  }
  const auto chosen = std::get<1>(choice.topk(moe.experts_per_token, -1));
  auto weights = scores.gather(1, chosen);
  if (moe.normalize_top_k) weights = weights / (weights.sum(-1, /*keepdim=*/true) + 1e-20);
  return {weights * moe.routed_scale, chosen};
}

Routing route(const Mixture& mixture, const at::Tensor& tokens, const MixtureOfExperts& moe, const Numerics& num) {
  if (moe.grouped_routing) return groupedRoute(mixture, tokens, moe);
  const auto logits = ops::linear(tokens, mixture.router, mixture.router_bias, num);
  // The top k of all experts' probabilities (Mixtral, Qwen), or of the logits, softmaxed
  // among themselves (gpt-oss): the same experts, other weights.
  const auto top = moe.softmax_after_top_k ? logits.topk(moe.experts_per_token, -1)
                                           : at::softmax(logits.to(at::kFloat), -1).topk(moe.experts_per_token, -1);
  auto weights = moe.softmax_after_top_k ? at::softmax(std::get<0>(top).to(at::kFloat), -1) : std::get<0>(top);
  if (moe.normalize_top_k) weights = weights / weights.sum(-1, /*keepdim=*/true);
  return {weights, std::get<1>(top)};
}

}  // namespace

at::Tensor forward(const Mixture& mixture, const at::Tensor& x, const ModelConfig& m, const Numerics& num) {
  const auto& moe = m.moe;
  const auto tokens = x.reshape({-1, x.size(-1)});
  auto [weights, chosen] = route(mixture, tokens, moe, num);
  if (moe.weights_in_compute_dtype) weights = num.round(weights.to(x.scalar_type()));
  auto out = at::zeros_like(tokens);
  for (int64_t e = 0; e < moe.experts; ++e) {
    const auto picked = chosen.eq(e);  // [N, k], at most one true a row
    const auto rows = picked.any(-1).nonzero().squeeze(-1);
    if (rows.numel() == 0) continue;
    // The chosen expert's weight for each of its tokens, times its output in the weights'
    // dtype (float32 for Mixtral, whose product transformers then rounds), added in expert order.
    const auto weight = (weights * picked.to(weights.scalar_type())).sum(-1).index_select(0, rows).unsqueeze(-1);
    const auto& expert = mixture.experts[static_cast<size_t>(e)];
    const auto picked_tokens = tokens.index_select(0, rows);
    const auto y = moe.swiglu_limit > 0 ? clampedSwiglu(expert, picked_tokens, moe, num)
                                        : gatedMlp(expert, picked_tokens, m.activation, num);
    out = num.round(out.index_add(0, rows, num.round((y * weight).to(x.scalar_type()))));
  }
  if (mixture.shared.gate.defined()) {
    auto shared = gatedMlp(mixture.shared, tokens, m.activation, num);
    if (mixture.shared_gate.defined()) shared = num.round(num.round(at::sigmoid(ops::linear(tokens, mixture.shared_gate, {}, num))) * shared);
    out = num.round(out + shared);
  }
  return out.reshape(x.sizes());
}

}  // namespace posgeom::model::mixture
