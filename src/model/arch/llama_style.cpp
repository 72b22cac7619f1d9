#include "llama_style.h"

#include "head_maps.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "posgeom/model/load/weights.h"
#include "rope_config.h"

namespace posgeom::model::llama_style {
namespace {

std::string layer(int64_t i) { return "layers." + std::to_string(i) + "."; }

}  // namespace

ModelConfig parseConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  m.num_kv_heads = c.positiveInt({"num_key_value_heads"}, m.num_heads);
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"rms_norm_eps"}, 1e-6);
  m.rope = readRopeConfig(c);
  m.activation = readActivation(c, "hidden_act", "silu");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  m.attention_bias = c.boolean({"attention_bias"}, false);
  const auto& j = c.json();
  if (j.contains("head_dim") && !j["head_dim"].is_null()) m.head_dim = c.requirePositiveInt({"head_dim"});
  if (m.head_dim == 0 && m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  const auto rotary_dims = static_cast<int64_t>(static_cast<double>(m.headDim()) * m.rope.partial_rotary_factor);
  if (rotary_dims < 2 || rotary_dims % 2 != 0)
    c.fail("RoPE turns pairs of dims: the rotary part of each head (head_dim " + std::to_string(m.headDim()) +
           " x partial_rotary_factor) must be even (here " + std::to_string(rotary_dims) + ")");
  if (c.boolean({"mlp_bias"}, false)) c.fail("mlp_bias = true is not supported");
  m.positions = PositionScheme::kRope;
  return m;
}

std::vector<int64_t> layerWindows(const io::JsonConfig& c, int64_t layers, const std::function<bool(int64_t)>& default_sliding,
                                  int64_t default_window) {
  const auto& j = c.json();
  const bool absent = !j.contains("sliding_window");
  const bool has_window = absent ? default_window > 0 : !j["sliding_window"].is_null();
  const int64_t window = absent ? default_window : has_window ? c.requirePositiveInt({"sliding_window"}) : 0;
  std::vector<int64_t> windows(static_cast<size_t>(layers), 0);
  if (j.contains("layer_types") && j["layer_types"].is_array()) {
    const auto& types = j["layer_types"];
    if (static_cast<int64_t>(types.size()) != layers) c.fail("layer_types must name one type per layer");
    for (int64_t i = 0; i < layers; ++i) {
      const auto& t = types[static_cast<size_t>(i)];
      const std::string type = t.is_string() ? t.get<std::string>() : "";
      if (type == "sliding_attention") {
        if (!has_window) c.fail("layer_types has sliding_attention layers but sliding_window is not set");
        windows[static_cast<size_t>(i)] = window;
      } else if (type != "full_attention") {
        c.fail("layer_types entry '" + type + "' is not supported (full_attention, sliding_attention)");
      }
    }
    return windows;
  }
  for (int64_t i = 0; i < layers && has_window; ++i)
    if (default_sliding(i)) windows[static_cast<size_t>(i)] = window;
  return windows;
}

// Qwen2's and Qwen3's windows: none unless use_sliding_window.
void qwenWindows(const io::JsonConfig& c, ModelConfig& m) {
  if (!c.boolean({"use_sliding_window"}, false)) return;
  const int64_t first = c.positiveInt({"max_window_layers"}, 28);
  m.attention_windows = layerWindows(c, m.num_layers, [first](int64_t i) { return i >= first; });
}

void windowsInEveryLayer(const io::JsonConfig& c, ModelConfig& m) {
  const auto& j = c.json();
  if (j.contains("sliding_window") && !j["sliding_window"].is_null())
    m.attention_windows.assign(static_cast<size_t>(m.num_layers), c.requirePositiveInt({"sliding_window"}));
}

// What Gemma and Gemma-2 share.
void gemmaConfig(const io::JsonConfig& c, ModelConfig& m, const char* activation_key) {
  m.activation = c.string({activation_key}, "gelu_pytorch_tanh");
  if (m.activation == "gelu") m.activation = "gelu_pytorch_tanh";
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported " + std::string(activation_key) + " '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  if (!c.json().contains("head_dim")) m.head_dim = 256;
}

double softCap(const io::JsonConfig& c, const char* key, double fallback) {
  const auto& j = c.json();
  if (!j.contains(key)) return fallback;
  if (j[key].is_null()) return 0.0;
  return positiveNumber(c, {key}, fallback, "positive or null");
}

nlohmann::json configJson(const ModelConfig& m, const LlamaStyle& style) {
  auto j = sizesJson(m, style.architecture, style.model_type);
  j.update({{"num_key_value_heads", m.num_kv_heads},
                      {"head_dim", m.headDim()},
                      {"intermediate_size", m.intermediate_size},
                      {"hidden_act", m.activation},
                      {"rms_norm_eps", m.norm_eps},
                      {"rope_theta", m.rope.theta},
                      {"max_position_embeddings", m.max_positions},
                      {"tie_word_embeddings", m.tie_word_embeddings},
                      {"attention_bias", m.attention_bias}});
  if (m.rope.type != "default") {
    j["rope_scaling"] = {{"rope_type", m.rope.type}, {"factor", m.rope.factor}};
    if (m.rope.type == "llama3")
      j["rope_scaling"].update({{"low_freq_factor", m.rope.low_freq_factor},
                                {"high_freq_factor", m.rope.high_freq_factor},
                                {"original_max_position_embeddings", m.rope.original_max_positions}});
    if (m.rope.type == "yarn")
      j["rope_scaling"].update({{"original_max_position_embeddings", m.rope.original_max_positions},
                                {"attention_factor", m.rope.attention_factor},
                                {"beta_fast", m.rope.beta_fast},
                                {"beta_slow", m.rope.beta_slow},
                                {"truncate", m.rope.truncate}});
    if (m.rope.mscale_all_dim > 0) j["rope_scaling"]["mscale_all_dim"] = m.rope.mscale_all_dim;
  }
  if (m.attention_scale > 0) j["query_pre_attn_scalar"] = 1.0 / (m.attention_scale * m.attention_scale);
  if (m.attention_logit_cap > 0) j["attn_logit_softcapping"] = m.attention_logit_cap;
  if (m.final_logit_cap > 0) j["final_logit_softcapping"] = m.final_logit_cap;
  int64_t window = 0;
  for (const int64_t w : m.attention_windows) window = std::max(window, w);
  if (window > 0) {
    j["sliding_window"] = window;
    j["layer_types"] = nlohmann::json::array();
    for (const int64_t w : m.attention_windows) j["layer_types"].push_back(w > 0 ? "sliding_attention" : "full_attention");
  }
  return j;
}

std::vector<TensorSpec> tensors(const ModelConfig& m, const LlamaStyle& style) {
  const int64_t d = m.hidden_size, f = m.intermediate_size, dh = m.headDim(), q = m.num_heads * dh, kv = m.num_kv_heads * dh;
  TensorSpecs s;
  auto norm = [&](const std::string& name, int64_t width) {
    if (!style.plain_layer_norms) s.norm(name, width, /*with_bias=*/style.layer_norms);
  };
  // With the parallel residual (Cohere) attention and MLP read the one input norm.
  const bool post_attention_norm = !m.parallel_residual;
  s.table("embed_tokens.weight", {m.vocab_size, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
    const auto l = layer(i);
    if (!style.post_norms) norm(l + "input_layernorm", d);
    if (style.fused_projections) s.weight(l + "self_attn.qkv_proj.weight", {q + 2 * kv, d});
    for (const auto& [name, rows] : {std::pair<std::string, int64_t>{"q_proj", q}, {"k_proj", kv}, {"v_proj", kv}}) {
      if (!style.fused_projections) s.weight(l + "self_attn." + name + ".weight", {rows, d});
      if (style.qkv_bias || m.qkv_bias || m.attention_bias) s.bias(l + "self_attn." + name + ".bias", rows);
    }
    s.weight(l + "self_attn.o_proj.weight", {d, q});
    if (m.attention_bias) s.bias(l + "self_attn.o_proj.bias", d);
    if (style.attention_sinks) s.bias(l + "self_attn.sinks", m.num_heads);
    if (style.qk_norm) s.norm(l + "self_attn.q_norm", dh, false).norm(l + "self_attn.k_norm", dh, false);
    if (style.joint_qk_norm) s.norm(l + "self_attn.q_norm", q, false).norm(l + "self_attn.k_norm", kv, false);
    if (m.qk_layer_norm && style.head_norm_per_tensor) {
      for (const auto& [name, heads] : {std::pair<std::string, int64_t>{"q", m.num_heads}, {"k", m.num_kv_heads}})
        for (int64_t h = 0; h < heads; ++h) s.norm(l + "self_attn." + name + "_layernorm.norms." + std::to_string(h), dh, false);
    } else if (m.qk_layer_norm) {
      s.scale(l + "self_attn.q_norm.weight", {m.num_heads, dh}).scale(l + "self_attn.k_norm.weight", {m.num_kv_heads, dh});
    }
    if (post_attention_norm) norm(l + "post_attention_layernorm", d);
    if (style.sandwich_norms) s.norm(l + "pre_feedforward_layernorm", d, false);
    if (style.sandwich_norms || style.post_norms) s.norm(l + "post_feedforward_layernorm", d, false);
    if (style.experts && m.moe.sparse(i)) {
      mixture::addTensors(s, l, m, *style.experts);
      continue;
    }
    if (style.dense_mlp) {
      s.weight(l + "mlp.c_fc.weight", {f, d}).weight(l + "mlp.c_proj.weight", {d, f});
      if (m.mlp_bias) s.bias(l + "mlp.c_fc.bias", f).bias(l + "mlp.c_proj.bias", d);
      continue;
    }
    if (style.fused_projections)
      s.weight(l + "mlp.gate_up_proj.weight", {2 * f, d});
    else
      s.weight(l + "mlp.gate_proj.weight", {f, d}).weight(l + "mlp.up_proj.weight", {f, d});
    s.weight(l + "mlp.down_proj.weight", {d, f});
  }
  s.outsideBlocks();
  norm("norm", d);
  s.head("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings);
  return s.take();
}

Architecture defineFamily(ArchitectureNames names, LlamaStyle style, FamilyConfig family_config, ShapeDefaults defaults,
                          FamilyJson family_json) {
  auto entry = defineArchitecture(
      std::move(names),
      [family_config, style](const io::JsonConfig& c) {
        ModelConfig m = parseConfig(c);
        // transformers' Llama-style attention turns whole heads (its cos and sin would not fit a part).
        if (!style.partial_rotary && m.rope.partial_rotary_factor != 1.0)
          c.fail("partial_rotary_factor other than 1 is not supported by this family");
        family_config(c, m);
        for (const int64_t w : m.attention_windows)
          if (w < 0) c.fail("sliding_window must be positive");
        return m;
      },
      [style, family_json](const ModelConfig& m) {
        auto j = configJson(m, style);
        if (family_json) family_json(m, j);
        return j;
      },
      [style](const ModelConfig& m) { return tensors(m, style); },
      [style](const ModelConfig& c, const Weights& w, const Numerics& n) -> std::unique_ptr<Model> {
        return std::make_unique<DecoderModel>(c, w, n, style);
      },
      std::move(defaults));
  entry.unused_by_design = {"rotary_emb.inv_freq"};  // a buffer older checkpoints hold
  return entry;
}

DecoderModel::DecoderModel(const ModelConfig& config, const Weights& w, const Numerics& num, LlamaStyle style)
    : Model(config, num), style_(std::move(style)) {
  embed_ = w.get("embed_tokens.weight");
  norm_ = style_.plain_layer_norms ? at::Tensor() : w.get("norm.weight");
  if (style_.layer_norms) norm_bias_ = w.get("norm.bias");
  lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : embed_;
  if (style_.attention_sinks)
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto sinks = w.get(layer(i) + "self_attn.sinks").to(at::kCPU, at::kDouble).contiguous();
      sinks_.emplace_back(sinks.data_ptr<double>(), sinks.data_ptr<double>() + sinks.numel());
    }
  layers_.init(config.num_layers, [this, w](int64_t i) { return loadLayer(w, i); }, w.streamed());
}

DecoderModel::Layer DecoderModel::loadLayer(const Weights& w, int64_t i) const {
  const auto& c = config();
  const auto l = layer(i);
  auto g = [&](const std::string& name) { return w.get(l + name); };
  auto when = [&](bool present, const std::string& name) { return present ? g(name) : at::Tensor(); };
  auto norm_weight = [&](const std::string& name) { return when(!style_.plain_layer_norms, name); };
  const bool post_attention_norm = !c.parallel_residual;
  const int64_t q_rows = c.num_heads * c.headDim(), kv_rows = c.num_kv_heads * c.headDim();
  const bool qkv_bias = style_.qkv_bias || c.qkv_bias || c.attention_bias;
  Layer layer_weights;
  layer_weights.ln_1 = style_.post_norms ? at::Tensor() : norm_weight("input_layernorm.weight");
  layer_weights.ln_1_bias = when(style_.layer_norms, "input_layernorm.bias");
  layer_weights.ln_2_bias = when(style_.layer_norms && post_attention_norm, "post_attention_layernorm.bias");
  if (style_.fused_projections) {
    // Rows [q | k | v] and [gate | up], split once.
    const auto qkv = g("self_attn.qkv_proj.weight");
    layer_weights.q = qkv.narrow(0, 0, q_rows).contiguous();
    layer_weights.k = qkv.narrow(0, q_rows, kv_rows).contiguous();
    layer_weights.v = qkv.narrow(0, q_rows + kv_rows, kv_rows).contiguous();
    const auto gate_up = g("mlp.gate_up_proj.weight");
    layer_weights.gate = gate_up.narrow(0, 0, c.intermediate_size).contiguous();
    layer_weights.up = gate_up.narrow(0, c.intermediate_size, c.intermediate_size).contiguous();
  } else {
    layer_weights.q = g("self_attn.q_proj.weight");
    layer_weights.k = g("self_attn.k_proj.weight");
    layer_weights.v = g("self_attn.v_proj.weight");
  }
  const bool sparse = style_.experts && c.moe.sparse(i);
  if (sparse) {
    layer_weights.mixture = mixture::load(w, l, c, *style_.experts);
  } else if (!style_.fused_projections) {
    if (!style_.dense_mlp) layer_weights.gate = g("mlp.gate_proj.weight");
    layer_weights.up = g(style_.dense_mlp ? "mlp.c_fc.weight" : "mlp.up_proj.weight");
  }
  layer_weights.up_bias = when(style_.dense_mlp && c.mlp_bias, "mlp.c_fc.bias");
  layer_weights.down_bias = when(style_.dense_mlp && c.mlp_bias, "mlp.c_proj.bias");
  layer_weights.q_bias = when(qkv_bias, "self_attn.q_proj.bias");
  layer_weights.k_bias = when(qkv_bias, "self_attn.k_proj.bias");
  layer_weights.v_bias = when(qkv_bias, "self_attn.v_proj.bias");
  layer_weights.o = g("self_attn.o_proj.weight");
  layer_weights.o_bias = when(c.attention_bias, "self_attn.o_proj.bias");
  const bool qk_norms = style_.qk_norm || style_.joint_qk_norm || c.qk_layer_norm;
  if (c.qk_layer_norm && style_.head_norm_per_tensor) {  // one tensor a head, stacked to [H, dh] once
    auto stacked = [&](const std::string& name, int64_t heads) {
      std::vector<at::Tensor> rows;
      for (int64_t h = 0; h < heads; ++h) rows.push_back(g("self_attn." + name + "_layernorm.norms." + std::to_string(h) + ".weight"));
      return at::stack(rows);
    };
    layer_weights.q_norm = stacked("q", c.num_heads);
    layer_weights.k_norm = stacked("k", c.num_kv_heads);
  } else {
    layer_weights.q_norm = when(qk_norms, "self_attn.q_norm.weight");
    layer_weights.k_norm = when(qk_norms, "self_attn.k_norm.weight");
  }
  layer_weights.ln_2 = post_attention_norm ? norm_weight("post_attention_layernorm.weight") : at::Tensor();
  layer_weights.pre_mlp_ln = when(style_.sandwich_norms, "pre_feedforward_layernorm.weight");
  layer_weights.post_mlp_ln = when(style_.sandwich_norms || style_.post_norms, "post_feedforward_layernorm.weight");
  if (!sparse) layer_weights.down = g(style_.dense_mlp ? "mlp.c_proj.weight" : "mlp.down_proj.weight");
  return layer_weights;
}

// Gemma's RMSNorm scales by 1 + w in float32 and rounds once, OLMo-2's by w; Llama's rounds
// the normed input before its scale.
at::Tensor DecoderModel::norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b) const {
  const auto& num = numerics();
  if (style_.layer_norms || style_.weight_only_layer_norms) return ops::layerNorm(x, w, b, config().norm_eps, num);
  if (style_.plain_layer_norms) {
    const auto y = at::layer_norm(x.to(num.wide()), {x.size(-1)}, {}, {}, 1e-5);
    return num.round(y.to(x.scalar_type()));
  }
  if (!style_.gemma_norms && !style_.post_norms && !style_.float32_norm_scale) return ops::rmsNorm(x, w, config().norm_eps, num);
  const auto xf = x.to(num.wide());
  const auto normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + config().norm_eps);
  const auto scale = style_.gemma_norms ? 1 + w.to(num.wide()) : w.to(num.wide());
  return num.round((normed * scale).to(x.scalar_type()));
}

// Command-R+'s and StableLM-2-12B's: x [B, H, T, dh] centred and normed over each head's dims
// in float32, times that head's weights [H, dh], rounded once (transformers' CohereLayerNorm,
// and StableLmLayerNormPerHead's bias-free nn.LayerNorm a head).
at::Tensor DecoderModel::headLayerNorm(const at::Tensor& x, const at::Tensor& w) const {
  const auto wide = numerics().wide();
  const auto xf = x.to(wide);
  const auto centred = xf - xf.mean(-1, /*keepdim=*/true);
  const auto normed = centred * at::rsqrt(centred.pow(2).mean(-1, /*keepdim=*/true) + config().norm_eps);
  return numerics().round((w.to(wide).unsqueeze(1) * normed).to(x.scalar_type()));
}

at::Tensor DecoderModel::attention(const Layer& l, int64_t block, const at::Tensor& a, const BlockContext& context) const {
  const auto& c = config();
  const auto& num = numerics();
  auto clip = [&](const at::Tensor& t) { return c.qkv_clip > 0 ? t.clamp(-c.qkv_clip, c.qkv_clip) : t; };
  auto q = clip(ops::linear(a, l.q, l.q_bias, num));
  auto k = clip(ops::linear(a, l.k, l.k_bias, num));
  if (style_.joint_qk_norm) {  // over every head's coordinates at once, before they are split
    q = norm(q, l.q_norm);
    k = norm(k, l.k_norm);
  }
  q = ops::splitHeads(q, c.num_heads);
  k = ops::splitHeads(k, c.num_kv_heads);
  if (style_.qk_norm) {  // each head's, as the family's other norms (Gemma-3's 1 + w)
    q = norm(q, l.q_norm);
    k = norm(k, l.k_norm);
  }
  if (c.qk_layer_norm) {
    q = headLayerNorm(q, l.q_norm);
    k = headLayerNorm(k, l.k_norm);
  }
  if (c.rotates(block)) {
    const auto& tables = rotaryTablesFor(block, context);
    q = num.round(ops::applyRotary(q, tables));
    k = num.round(ops::applyRotary(k, tables));
  }
  const auto v = ops::splitHeads(clip(ops::linear(a, l.v, l.v_bias, num)), c.num_kv_heads);
  return ops::linear(ops::mergeHeads(ops::attention(q, k, v, attentionShape(block, context), num)), l.o, l.o_bias, num);
}

positions::BlockPositions DecoderModel::kernelPositions(int64_t block, int64_t seq_len) const {
  auto p = Model::kernelPositions(block, seq_len);
  if (style_.attention_sinks) p.sinks = sinks_.at(static_cast<size_t>(block));
  return p;
}

at::Tensor DecoderModel::embed(const at::Tensor& ids, BlockContext& context) const {
  const auto& c = config();
  const auto& num = numerics();
  const int64_t t = ids.size(1);
  setRotaryTables(context, t);
  auto x = at::embedding(embed_, ids);
  // Gemma multiplies by sqrt(d) held in the activations' dtype.
  if (style_.gemma_norms) x = num.round(x * num.fit(at::scalar_tensor(std::sqrt(static_cast<double>(c.hidden_size)))));
  // Granite multiplies by a Python float: the product in the activations' dtype.
  if (c.embedding_multiplier != 1) x = num.round(x * c.embedding_multiplier);
  return x;
}

at::Tensor DecoderModel::toResidual(const at::Tensor& out) const {
  const double multiplier = config().residual_multiplier;
  return multiplier == 1 ? out : numerics().round(out * multiplier);
}

at::Tensor DecoderModel::mlp(const Layer& l, const at::Tensor& m) const {
  const auto& num = numerics();
  if (style_.dense_mlp)
    return ops::linear(ops::activation(config().activation, ops::linear(m, l.up, l.up_bias, num), num), l.down, l.down_bias, num);
  if (l.mixture) return mixture::forward(*l.mixture, m, config(), num);
  return mixture::gatedMlp({l.gate, l.up, l.down}, m, config().activation, num);
}

at::Tensor DecoderModel::block(int64_t i, const at::Tensor& x, const BlockContext& context) const {
  const auto& num = numerics();
  const auto held = layers_.at(i);
  const auto& l = *held;
  const auto a = style_.post_norms ? x : norm(x, l.ln_1, l.ln_1_bias);
  context.attentionInput(i, a);
  const auto attended = attention(l, i, a, context);
  if (config().parallel_residual) {  // both off the one normed input, added as transformers adds them
    context.mlpInput(i, x);
    return num.round(num.round(x + attended) + mlp(l, a));
  }
  // Gemma-2 and OLMo-2 norm what attention and the MLP add; OLMo-2 norms nothing they read.
  const bool normed_outputs = style_.sandwich_norms || style_.post_norms;
  const auto residual = num.round(x + toResidual(normed_outputs ? norm(attended, l.ln_2) : attended));
  context.mlpInput(i, residual);
  const auto mlp_input = style_.post_norms       ? residual
                         : style_.sandwich_norms ? norm(residual, l.pre_mlp_ln)
                                                 : norm(residual, l.ln_2, l.ln_2_bias);
  const auto out = mlp(l, mlp_input);
  return num.round(residual + toResidual(normed_outputs ? norm(out, l.post_mlp_ln) : out));
}

ForwardOutputs DecoderModel::finish(const at::Tensor& x, const ForwardRequest& r) const {
  const auto& c = config();
  const auto& num = numerics();
  ForwardOutputs out;
  const auto f = norm(x, norm_, norm_bias_);
  if (r.want_final_norm) out.final_norm = f;
  if (r.want_logits) {
    out.logits = ops::linear(f, lm_head_, {}, num);
    if (c.final_logit_cap > 0) out.logits = num.round(at::tanh(out.logits / c.final_logit_cap) * c.final_logit_cap);
    if (c.logit_divisor != 1) out.logits = num.round(out.logits / c.logit_divisor);
  }
  return out;
}

std::optional<NeuronCircuit> DecoderModel::neuronCircuit(int64_t /*seq_len*/) const {
  const auto& c = config();
  // A parallel residual's MLP (Cohere) reads the block's input, not the stream after attention: not this circuit.
  // Nor a mixture's: which neurons a token reaches depends on its router.
  if (style_.sandwich_norms || style_.post_norms || c.qkv_clip > 0 || c.parallel_residual || (style_.experts && c.moe.sparse(0)))
    return std::nullopt;
  const auto held = layers_.peek(0);
  const auto& l = *held;
  const auto host = at::TensorOptions().dtype(at::kFloat).device(at::kCPU);
  NeuronCircuit n;
  // No position embedding: a token's attention input is its normed embedding.
  auto e = embed_;
  if (style_.gemma_norms) e = e * std::sqrt(static_cast<double>(c.hidden_size));
  if (c.embedding_multiplier != 1) e = e * c.embedding_multiplier;
  n.token_inputs = norm(e, l.ln_1, l.ln_1_bias).to(host);
  const int64_t h = c.num_heads, dh = c.headDim(), d = c.hidden_size, group = h / c.num_kv_heads;
  // Grouped-query heads share their key-value head's value map; what reaches the residual
  // stream is the output map times Granite's residual_multiplier.
  const auto v = l.v.to(host).reshape({c.num_kv_heads, dh, d}).repeat_interleave(group, 0).reshape({h * dh, d});
  std::tie(n.wv, n.wo) = arch::perHeadValueOutput(v, l.o, h, dh);
  n.wo = n.wo * c.residual_multiplier;
  if (style_.plain_layer_norms) {  // OLMo: a LayerNorm without weights
    n.norm_weight = at::ones({d}, host);
    n.norm_bias = at::zeros({d}, host);
    n.norm_eps = 1e-5;
  } else {
    n.norm_weight = (style_.gemma_norms ? 1 + l.ln_2.to(host) : l.ln_2.to(host));
    if (style_.layer_norms) n.norm_bias = l.ln_2_bias.to(host);  // a LayerNorm: its mean taken out too
    n.norm_eps = c.norm_eps;
  }
  // The neuron: the gate's pre-activation, or a dense MLP's (with its bias).
  n.w_in = (style_.dense_mlp ? l.up : l.gate).to(host).contiguous();
  if (l.up_bias.defined()) n.b_in = l.up_bias.to(host);
  return n;
}

// RoPE is not in these maps: the heads analysis rotates q at the query's position and k
// at the key's (kernelPositions). The key bias rotates with its key, so unlike an
// unrotated one it does not cancel in the softmax: it is kept.
QueryKeyMaps DecoderModel::queryKeyMaps(int64_t index) const {
  const auto& c = config();
  const auto held = layers_.peek(index);
  const auto& l = *held;
  const int64_t h = c.num_heads, dh = c.headDim(), d = c.hidden_size, kv = c.num_kv_heads, group = h / kv;
  auto per_query_head = [&](const at::Tensor& t, int64_t heads) {
    auto shaped = t.to(at::kFloat).reshape(t.dim() == 2 ? std::vector<int64_t>{heads, dh, d} : std::vector<int64_t>{heads, dh});
    return heads == h ? shaped : shaped.repeat_interleave(group, 0);
  };
  const auto zeros = at::zeros({h, dh}, at::TensorOptions().dtype(at::kFloat).device(l.q.device()));
  QueryKeyMaps maps{per_query_head(l.q, h), l.q_bias.defined() ? per_query_head(l.q_bias, h) : zeros,
                    per_query_head(l.k, kv), l.k_bias.defined() ? per_query_head(l.k_bias, kv) : zeros};
  if (style_.qk_norm) {  // the scales as applied: Gemma's 1 + w
    const double offset = style_.gemma_norms ? 1.0 : 0.0;
    maps.q_norm = (l.q_norm.to(at::kFloat) + offset).expand({h, dh}).contiguous();
    maps.k_norm = (l.k_norm.to(at::kFloat) + offset).expand({h, dh}).contiguous();
    maps.norm_eps = c.norm_eps;
  }
  if (style_.joint_qk_norm) {  // each head's part of the one weight over all heads
    maps.q_norm = per_query_head(l.q_norm, h).contiguous();
    maps.k_norm = per_query_head(l.k_norm, kv).contiguous();
    maps.norm_eps = c.norm_eps;
    maps.joint_norm = true;
  }
  if (c.qk_layer_norm) {
    // A LayerNorm is the RMSNorm of the centred vector, and centring each head's q (and k) is
    // linear: it goes into the maps, and the norm is Qwen3's with the head's own weights.
    for (auto* t : {&maps.wq, &maps.bq, &maps.wk, &maps.bk}) *t = *t - t->mean(1, /*keepdim=*/true);
    maps.q_norm = per_query_head(l.q_norm.reshape({-1}), h).contiguous();
    maps.k_norm = per_query_head(l.k_norm.reshape({-1}), kv).contiguous();
    maps.norm_eps = c.norm_eps;
  }
  maps.clip = c.qkv_clip;
  return maps;
}

}  // namespace posgeom::model::llama_style
