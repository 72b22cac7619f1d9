// ModernBERT: a bidirectional encoder with RoPE of two kinds. hidden.0 is LayerNorm(token
// embedding); pre-norm blocks (block 0 takes hidden.0 as it is: its attention norm is the
// identity), fused Wqkv (q | k | v), Wo, and a GLU MLP: Wi's first half through the
// activation times its second half, then Wo; a final LayerNorm. LayerNorms without bias
// unless norm_bias; maps without bias unless attention_bias / mlp_bias. Blocks are global
// every global_attn_every_n_layers (3; block 0 is global) or as layer_types says; the others
// see keys within local_attention / 2 on both sides and turn by RoPE of their own
// (rope_parameters per layer type in transformers 5, else global_rope_theta 160,000 and
// local_rope_theta 10,000). The MLM head (head.dense, activation, head.norm, decoder tied to
// the embedding unless tie_word_embeddings is false, decoder bias) is optional.
#include "architectures.h"
#include "head_maps.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"
#include "posgeom/model/load/weights.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

std::string modernBertLayer(int64_t i) { return "layers." + std::to_string(i) + "."; }

// Which blocks are local: layer_types, else every block but each global_attn_every_n_layers-th.
std::vector<int64_t> localWindows(const io::JsonConfig& c, int64_t layers, int64_t window) {
  std::vector<int64_t> windows(static_cast<size_t>(layers), 0);
  const auto& j = c.json();
  if (j.contains("layer_types") && !j["layer_types"].is_null()) {
    const auto* types = &j["layer_types"];
    if (!types->is_array() || static_cast<int64_t>(types->size()) != layers)
      c.fail("layer_types must list one of \"full_attention\" or \"sliding_attention\" for each of the " +
             std::to_string(layers) + " layers");
    for (int64_t i = 0; i < layers; ++i) {
      const auto& t = (*types)[static_cast<size_t>(i)];
      if (t == "sliding_attention")
        windows[static_cast<size_t>(i)] = window;
      else if (t != "full_attention")
        c.fail("layer_types[" + std::to_string(i) + "] is " + t.dump() + ", not \"full_attention\" or \"sliding_attention\"");
    }
    return windows;
  }
  const int64_t every = c.positiveInt({"global_attn_every_n_layers"}, 3);
  for (int64_t i = 0; i < layers; ++i)
    if (i % every != 0) windows[static_cast<size_t>(i)] = window;
  return windows;
}

ModelConfig readModernBertConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 8192);
  m.norm_eps = normEpsilon(c, {"norm_eps"}, 1e-5);
  m.activation = readActivation(c, "hidden_activation", "gelu");
  const auto head_activation = readActivation(c, "classifier_activation", "gelu");
  if (head_activation != m.activation)
    c.fail("classifier_activation '" + head_activation + "' differs from hidden_activation '" + m.activation +
           "' (posgeom's ModernBERT head takes the blocks' activation)");
  m.norm_bias = c.boolean({"norm_bias"}, false);
  m.attention_bias = c.boolean({"attention_bias"}, false);
  m.mlp_bias = c.boolean({"mlp_bias"}, false);
  m.head_dense_bias = c.boolean({"classifier_bias"}, false);
  m.decoder_bias = c.boolean({"decoder_bias"}, true);
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  // local_attention is the whole window; a local block sees |n - i| <= local_attention / 2.
  const int64_t local = c.positiveInt({"local_attention"}, 128);
  m.attention_windows = localWindows(c, m.num_layers, local / 2 + 1);
  const auto& j = c.json();
  if (j.contains("rope_parameters") && !j["rope_parameters"].is_null()) {
    m.rope = readRopeConfig(c);
    m.local_rope = readLayerTypeRope(c, "sliding_attention");
  } else {
    if (j.contains("rope_scaling") && !j["rope_scaling"].is_null()) c.fail("rope_scaling is not supported for modernbert");
    m.rope.theta = positiveNumber(c, {"global_rope_theta"}, 160000.0);
    RopeConfig local_rope;
    local_rope.theta = positiveNumber(c, {"local_rope_theta"}, 10000.0);
    m.local_rope = local_rope;
  }
  m.bidirectional = true;
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json modernBertConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "ModernBertForMaskedLM", "modernbert");
  nlohmann::json types = nlohmann::json::array();
  int64_t local = 128;
  for (int64_t i = 0; i < m.num_layers; ++i) {
    types.push_back(m.attentionWindow(i) > 0 ? "sliding_attention" : "full_attention");
    if (m.attentionWindow(i) > 0) local = 2 * (m.attentionWindow(i) - 1);
  }
  j.update({{"intermediate_size", m.intermediate_size},
            {"max_position_embeddings", m.max_positions},
            {"norm_eps", m.norm_eps},
            {"hidden_activation", m.activation},
            {"classifier_activation", m.activation},
            {"norm_bias", m.norm_bias},
            {"attention_bias", m.attention_bias},
            {"mlp_bias", m.mlp_bias},
            {"classifier_bias", m.head_dense_bias},
            {"decoder_bias", m.decoder_bias},
            {"tie_word_embeddings", m.tie_word_embeddings},
            {"local_attention", local},
            {"layer_types", types},
            {"global_rope_theta", m.rope.theta},
            {"local_rope_theta", m.local_rope ? m.local_rope->theta : m.rope.theta}});
  return j;
}

std::vector<TensorSpec> modernBertTensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  auto linear = [&](const std::string& name, std::vector<int64_t> shape, bool bias) {
    const int64_t rows = shape[0];
    s.weight(name + ".weight", std::move(shape));
    if (bias) s.bias(name + ".bias", rows);
  };
  s.table("embeddings.tok_embeddings.weight", {m.vocab_size, d}).norm("embeddings.norm", d, m.norm_bias);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
    const auto l = modernBertLayer(i);
    if (i > 0) s.norm(l + "attn_norm", d, m.norm_bias);
    linear(l + "attn.Wqkv", {3 * d, d}, m.attention_bias);
    linear(l + "attn.Wo", {d, d}, m.attention_bias);
    s.norm(l + "mlp_norm", d, m.norm_bias);
    linear(l + "mlp.Wi", {2 * f, d}, m.mlp_bias);
    linear(l + "mlp.Wo", {d, f}, m.mlp_bias);
  }
  s.outsideBlocks().norm("final_norm", d, m.norm_bias);
  s.output("head.dense.weight", {d, d});
  if (m.head_dense_bias) s.output("head.dense.bias", {d});
  s.output("head.norm.weight", {d});
  if (m.norm_bias) s.output("head.norm.bias", {d});
  s.head("decoder.weight", {m.vocab_size, d}, m.tie_word_embeddings, true);
  if (m.decoder_bias) s.output("decoder.bias", {m.vocab_size});
  return s.take();
}

class ModernBert final : public Model {
 public:
  ModernBert(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    auto optional = [&w](const std::string& name, bool present) { return present ? w.get(name) : at::Tensor(); };
    embed_ = w.get("embeddings.tok_embeddings.weight");
    embed_norm_ = {w.get("embeddings.norm.weight"), optional("embeddings.norm.bias", config.norm_bias)};
    final_norm_ = {w.get("final_norm.weight"), optional("final_norm.bias", config.norm_bias)};
    const int64_t d = config.hidden_size;
    layers_.init(
        config.num_layers,
        [w, d, norm_bias = config.norm_bias, attention_bias = config.attention_bias, mlp_bias = config.mlp_bias](int64_t i) {
          const auto l = modernBertLayer(i);
          auto g = [&](const std::string& name, bool present = true) { return present ? w.get(l + name) : at::Tensor(); };
          Layer layer;
          if (i > 0) layer.attention_norm = {g("attn_norm.weight"), g("attn_norm.bias", norm_bias)};
          const auto qkv = g("attn.Wqkv.weight"), qkv_bias = g("attn.Wqkv.bias", attention_bias);
          layer.q = qkv.narrow(0, 0, d), layer.k = qkv.narrow(0, d, d), layer.v = qkv.narrow(0, 2 * d, d);
          if (attention_bias) layer.q_b = qkv_bias.narrow(0, 0, d), layer.k_b = qkv_bias.narrow(0, d, d), layer.v_b = qkv_bias.narrow(0, 2 * d, d);
          layer.o = g("attn.Wo.weight"), layer.o_b = g("attn.Wo.bias", attention_bias);
          layer.mlp_norm = {g("mlp_norm.weight"), g("mlp_norm.bias", norm_bias)};
          layer.wi = g("mlp.Wi.weight"), layer.wi_b = g("mlp.Wi.bias", mlp_bias);
          layer.wo = g("mlp.Wo.weight"), layer.wo_b = g("mlp.Wo.bias", mlp_bias);
          return layer;
        },
        w.streamed());
    has_head_ = w.has("head.dense.weight") && w.has("head.norm.weight") && (!config.head_dense_bias || w.has("head.dense.bias")) &&
                (!config.norm_bias || w.has("head.norm.bias")) && (!config.decoder_bias || w.has("decoder.bias")) &&
                (config.tie_word_embeddings || w.has("decoder.weight"));
    if (has_head_) {
      head_dense_ = w.get("head.dense.weight"), head_dense_b_ = optional("head.dense.bias", config.head_dense_bias);
      head_norm_ = {w.get("head.norm.weight"), optional("head.norm.bias", config.norm_bias)};
      decoder_ = config.tie_word_embeddings ? embed_ : w.get("decoder.weight");
      decoder_b_ = optional("decoder.bias", config.decoder_bias);
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override {
    setRotaryTables(context, ids.size(1));
    return norm(at::embedding(embed_, ids), embed_norm_);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto held = layers_.at(i);
    const auto& l = *held;
    const auto a = l.attention_norm.w.defined() ? norm(x, l.attention_norm) : x;
    context.attentionInput(i, a);
    const auto& tables = rotaryTablesFor(i, context);
    const auto q = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, l.q, l.q_b, num), c.num_heads), tables));
    const auto k = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, l.k, l.k_b, num), c.num_heads), tables));
    const auto v = ops::splitHeads(ops::linear(a, l.v, l.v_b, num), c.num_heads);
    const auto ctx = ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num));
    const auto attended = num.round(x + ops::linear(ctx, l.o, l.o_b, num));
    const auto wide = ops::linear(norm(attended, l.mlp_norm), l.wi, l.wi_b, num);
    const int64_t f = c.intermediate_size;
    const auto glu = num.round(ops::activation(c.activation, wide.narrow(-1, 0, f), num) * wide.narrow(-1, f, f));
    return num.round(attended + ops::linear(glu, l.wo, l.wo_b, num));
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    const auto& num = numerics();
    const auto normed = norm(x, final_norm_);
    if (r.want_final_norm) out.final_norm = normed;
    if (r.want_logits && has_head_) {
      const auto h = norm(ops::activation(config().activation, ops::linear(normed, head_dense_, head_dense_b_, num), num), head_norm_);
      out.logits = ops::linear(h, decoder_, decoder_b_, num);
    }
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto held = layers_.peek(index);
    return arch::perHeadMaps(held->q, held->q_b, held->k, held->k_b, config().num_heads, config().headDim());
  }

  bool hasLmHead() const override { return has_head_; }
  void readBlockAhead(int64_t index) const override { layers_.readAhead(index); }
  void releaseBlock(int64_t index) const override { layers_.release(index); }

 private:
  using Norm = arch::LayerNormWeights;
  at::Tensor norm(const at::Tensor& x, const Norm& n) const { return ops::layerNorm(x, n.w, n.b, config().norm_eps, numerics()); }

  struct Layer {
    Norm attention_norm;  // undefined in block 0
    at::Tensor q, q_b, k, k_b, v, v_b, o, o_b;
    Norm mlp_norm;
    at::Tensor wi, wi_b, wo, wo_b;
  };
  at::Tensor embed_;
  Norm embed_norm_, final_norm_;
  bool has_head_ = false;
  at::Tensor head_dense_, head_dense_b_, decoder_, decoder_b_;
  Norm head_norm_;
  StreamedBlocks<Layer> layers_;  // last: a read-ahead reads the members above
};

}  // namespace

Architecture modernBertArchitecture() {
  auto entry = defineArchitecture<ModernBert>({"modernbert", "ModernBERT", {"model."}}, readModernBertConfig, modernBertConfigJson,
                                              modernBertTensors, {"gelu", true, PositionScheme::kRope});
  entry.config_for_shape = [](const ModelShape& shape) {
    auto m = configForShape(shape, {"gelu", true, PositionScheme::kRope});
    m.bidirectional = true;
    m.norm_bias = false;
    m.attention_windows.assign(static_cast<size_t>(m.num_layers), 0);
    for (int64_t i = 0; i < m.num_layers; ++i)
      if (i % 3 != 0) m.attention_windows[static_cast<size_t>(i)] = 65;  // local_attention 128
    m.rope.theta = 160000.0;
    RopeConfig local;
    local.theta = 10000.0;
    m.local_rope = local;
    return m;
  };
  return entry;
}

}  // namespace posgeom::model
