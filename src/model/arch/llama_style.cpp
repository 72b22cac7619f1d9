#include "llama_style.h"

#include "posgeom/base/error.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/ops.h"

namespace posgeom::model::llama_style {
namespace {

std::string layer(int64_t i) { return "layers." + std::to_string(i) + "."; }

// RoPE's base and variant. transformers 5 writes rope_parameters {rope_theta, rope_type,
// ...}; earlier versions rope_theta and rope_scaling. Only the plain rotation is read:
// a scaled one (llama3, linear, dynamic, yarn) or a partial one would silently give other
// positions than the model's, so it is refused by name.
double ropeTheta(const io::JsonConfig& c) {
  const auto& j = c.json();
  std::string type = "default";
  double theta = c.number({"rope_theta"}, 10000.0);
  if (j.contains("rope_parameters") && j["rope_parameters"].is_object()) {
    const auto& p = j["rope_parameters"];
    if (!p.contains("rope_theta") || !p["rope_theta"].is_number()) c.fail("rope_parameters has no numeric rope_theta");
    theta = p["rope_theta"].get<double>();
    if (p.contains("rope_type") && p["rope_type"].is_string()) type = p["rope_type"].get<std::string>();
    if (p.contains("partial_rotary_factor") && p["partial_rotary_factor"].is_number() &&
        p["partial_rotary_factor"].get<double>() != 1.0)
      c.fail("rope_parameters.partial_rotary_factor other than 1 is not supported yet");
  } else if (j.contains("rope_scaling") && j["rope_scaling"].is_object()) {
    const auto& s = j["rope_scaling"];
    type = s.value("rope_type", s.value("type", std::string("unknown")));
  }
  if (type != "default")
    c.fail("RoPE of type '" + type + "' (rope_scaling / rope_parameters) is not supported yet: only the plain rotation");
  if (!(theta > 0)) c.fail("rope_theta must be positive");
  return theta;
}

}  // namespace

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"hidden_size"});
  m.num_layers = c.requirePositiveInt({"num_hidden_layers"});
  m.num_heads = c.requirePositiveInt({"num_attention_heads"});
  m.num_kv_heads = c.positiveInt({"num_key_value_heads"}, m.num_heads);
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = c.number({"rms_norm_eps"}, 1e-6);
  m.rope_theta = ropeTheta(c);
  m.activation = c.string({"hidden_act"}, "silu");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported hidden_act '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  if (c.json().contains("head_dim") && c.json()["head_dim"].is_number_integer() &&
      c.json()["head_dim"].get<int64_t>() * m.num_heads != m.hidden_size)
    c.fail("head_dim x num_attention_heads must equal hidden_size");
  if (c.boolean({"mlp_bias"}, false)) c.fail("mlp_bias = true is not supported");
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json configJson(const ModelConfig& m, const LlamaStyle& style) {
  return {{"architectures", {style.architecture}},
          {"model_type", style.model_type},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"num_hidden_layers", m.num_layers},
          {"num_attention_heads", m.num_heads},
          {"num_key_value_heads", m.num_kv_heads},
          {"intermediate_size", m.intermediate_size},
          {"hidden_act", m.activation},
          {"rms_norm_eps", m.norm_eps},
          {"rope_theta", m.rope_theta},
          {"max_position_embeddings", m.max_positions},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m, const LlamaStyle& style) {
  const int64_t d = m.hidden_size, f = m.intermediate_size, kv = m.num_kv_heads * m.headDim();
  TensorSpecs s;
  s.table("embed_tokens.weight", {m.vocab_size, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto l = layer(i);
    s.norm(l + "input_layernorm", d, /*with_bias=*/false);
    for (const auto& [name, rows] : {std::pair<std::string, int64_t>{"q_proj", d}, {"k_proj", kv}, {"v_proj", kv}}) {
      s.weight(l + "self_attn." + name + ".weight", {rows, d});
      if (style.qkv_bias) s.bias(l + "self_attn." + name + ".bias", rows);
    }
    s.weight(l + "self_attn.o_proj.weight", {d, d})
        .norm(l + "post_attention_layernorm", d, /*with_bias=*/false)
        .weight(l + "mlp.gate_proj.weight", {f, d})
        .weight(l + "mlp.up_proj.weight", {f, d})
        .weight(l + "mlp.down_proj.weight", {d, f});
  }
  s.norm("norm", d, /*with_bias=*/false);
  s.output("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings);
  return s.take();
}

Architecture defineFamily(ArchitectureNames names, LlamaStyle style, std::function<void(const io::JsonConfig&)> check_config) {
  return defineArchitecture(
      std::move(names),
      [check_config](const io::JsonConfig& c) {
        check_config(c);
        return parseConfig(c);
      },
      [style](const ModelConfig& m) { return configJson(m, style); },
      [style](const ModelConfig& m) { return tensors(m, style); },
      [style](const ModelConfig& c, const Weights& w, const Numerics& n) -> std::unique_ptr<Model> {
        return std::make_unique<DecoderModel>(c, w, n, style);
      },
      {"silu", false, PositionScheme::kRope});
}

DecoderModel::DecoderModel(const ModelConfig& config, const Weights& w, const Numerics& num, LlamaStyle style)
    : Model(config, num), style_(std::move(style)) {
  embed_ = w.get("embed_tokens.weight");
  norm_ = w.get("norm.weight");
  lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : embed_;
  for (int64_t i = 0; i < config.num_layers; ++i) {
    const auto l = layer(i);
    auto g = [&](const std::string& name) { return w.get(l + name); };
    auto bias = [&](const std::string& name) { return style_.qkv_bias ? g(name) : at::Tensor(); };
    layers_.push_back({g("input_layernorm.weight"), g("self_attn.q_proj.weight"), bias("self_attn.q_proj.bias"),
                       g("self_attn.k_proj.weight"), bias("self_attn.k_proj.bias"), g("self_attn.v_proj.weight"),
                       bias("self_attn.v_proj.bias"), g("self_attn.o_proj.weight"), g("post_attention_layernorm.weight"),
                       g("mlp.gate_proj.weight"), g("mlp.up_proj.weight"), g("mlp.down_proj.weight")});
  }
}

ForwardOutputs DecoderModel::forward(const ForwardRequest& r) const {
  const auto& c = config();
  const auto& num = numerics();
  const bool causal = causalFor(r);
  const int64_t last = lastLayerFor(r);
  const auto ids = idsOnDevice(r.ids);
  const auto rope = ops::rotaryTables(ids.size(1), c.headDim(), c.rope_theta, num);
  auto x = at::embedding(embed_, ids);
  emitHidden(r, 0, x);
  for (int64_t i = 0; i < last; ++i) {
    const auto& l = layers_[static_cast<size_t>(i)];
    const auto a = ops::rmsNorm(x, l.ln_1, c.norm_eps, num);
    emitAttentionInput(r, i, a);
    const auto q = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, l.q, l.q_bias, num), c.num_heads), rope));
    const auto k = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, l.k, l.k_bias, num), c.num_kv_heads), rope));
    const auto v = ops::splitHeads(ops::linear(a, l.v, l.v_bias, num), c.num_kv_heads);
    const auto ctx = ops::mergeHeads(ops::attention(q, k, v, causal, {}, num));
    x = num.round(x + ops::linear(ctx, l.o, {}, num));
    const auto m = ops::rmsNorm(x, l.ln_2, c.norm_eps, num);
    const auto gate = ops::activation(c.activation, ops::linear(m, l.gate, {}, num), num);
    x = num.round(x + ops::linear(num.round(gate * ops::linear(m, l.up, {}, num)), l.down, {}, num));
    emitHidden(r, i + 1, x);
  }
  ForwardOutputs out;
  if ((r.want_final_norm || r.want_logits) && last == c.num_layers) {
    const auto f = ops::rmsNorm(x, norm_, c.norm_eps, num);
    if (r.want_final_norm) out.final_norm = f;
    if (r.want_logits) out.logits = ops::linear(f, lm_head_, {}, num);
  }
  return out;
}

// RoPE is not in these maps: the heads analysis rotates q at the query's position and k
// at the key's (ops::rotaryTables with config().rope_theta). The key bias rotates with
// its key, so unlike an unrotated one it does not cancel in the softmax: it is kept.
QueryKeyMaps DecoderModel::queryKeyMaps(int64_t index) const {
  const auto& c = config();
  const auto& l = layers_.at(static_cast<size_t>(index));
  const int64_t h = c.num_heads, dh = c.headDim(), d = c.hidden_size, group = h / c.num_kv_heads;
  const auto wq = l.q.to(at::kFloat).reshape({h, dh, d});
  const auto wk = l.k.to(at::kFloat).reshape({c.num_kv_heads, dh, d}).repeat_interleave(group, 0);
  const auto zeros = at::zeros({h, dh}, wq.options());
  const auto bq = l.q_bias.defined() ? l.q_bias.to(at::kFloat).reshape({h, dh}) : zeros;
  const auto bk = l.k_bias.defined() ? l.k_bias.to(at::kFloat).reshape({c.num_kv_heads, dh}).repeat_interleave(group, 0) : zeros;
  return {wq, bq, wk, bk};
}

KernelPositions DecoderModel::kernelPositions() const {
  KernelPositions k;
  k.rope_theta = config().rope_theta;
  return k;
}

}  // namespace posgeom::model::llama_style
