// GPT-NeoX / Pythia: RoPE on the first rotary_pct of each head (rotate_half), pre-LN blocks
// with LayerNorm biases, attention and MLP in parallel off the same input (unless
// use_parallel_residual is false), and query/key/value fused per head as [H, 3, dh].
#include "architectures.h"
#include "head_maps.h"
#include "posgeom/base/error.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/tensor_specs.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

std::string layer(int64_t i) { return "layers." + std::to_string(i) + "."; }

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"hidden_size"});
  m.num_layers = c.requirePositiveInt({"num_hidden_layers"});
  m.num_heads = c.requirePositiveInt({"num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.intermediate_size = c.positiveInt({"intermediate_size"}, 4 * m.hidden_size);
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-5);
  m.activation = c.string({"hidden_act"}, "gelu");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported hidden_act '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  m.attention_bias = c.boolean({"attention_bias"}, true);
  m.parallel_residual = c.boolean({"use_parallel_residual"}, true);
  // Pythia's configs (before transformers 5) name RoPE rotary_pct and rotary_emb_base.
  m.rope = readRopeConfig(c);
  const auto& j = c.json();
  if (!j.contains("rope_parameters")) {
    m.rope.partial_rotary_factor = c.number({"rotary_pct"}, 0.25);
    m.rope.theta = positiveNumber(c, {"rotary_emb_base", "rope_theta"}, 10000.0);
  }
  if (!(m.rope.partial_rotary_factor > 0 && m.rope.partial_rotary_factor <= 1)) c.fail("rotary_pct must lie in (0, 1]");
  if (m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  const auto rotary_dims = static_cast<int64_t>(static_cast<double>(m.headDim()) * m.rope.partial_rotary_factor);
  if (rotary_dims < 2 || rotary_dims % 2 != 0)
    c.fail("rotary_pct must turn an even number of each head's dims (here " + std::to_string(rotary_dims) + ")");
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  return {{"architectures", {"GPTNeoXForCausalLM"}},
          {"model_type", "gpt_neox"},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"num_hidden_layers", m.num_layers},
          {"num_attention_heads", m.num_heads},
          {"intermediate_size", m.intermediate_size},
          {"hidden_act", m.activation},
          {"layer_norm_eps", m.norm_eps},
          {"max_position_embeddings", m.max_positions},
          {"rotary_pct", m.rope.partial_rotary_factor},
          {"rotary_emb_base", m.rope.theta},
          {"use_parallel_residual", m.parallel_residual},
          {"attention_bias", m.attention_bias},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("embed_in.weight", {m.vocab_size, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto l = layer(i);
    s.norm(l + "input_layernorm", d).weight(l + "attention.query_key_value.weight", {3 * d, d});
    if (m.attention_bias) s.bias(l + "attention.query_key_value.bias", 3 * d);
    s.weight(l + "attention.dense.weight", {d, d});
    if (m.attention_bias) s.bias(l + "attention.dense.bias", d);
    s.norm(l + "post_attention_layernorm", d)
        .weight(l + "mlp.dense_h_to_4h.weight", {f, d})
        .bias(l + "mlp.dense_h_to_4h.bias", f)
        .weight(l + "mlp.dense_4h_to_h.weight", {d, f})
        .bias(l + "mlp.dense_4h_to_h.bias", d);
  }
  s.norm("final_layer_norm", d);
  // Pythia's checkpoints call the LM head embed_out; transformers 5 reads it as lm_head.
  // Either may be stored (neither: no logits); tied, neither is used.
  for (const char* name : {"embed_out.weight", "lm_head.weight"})
    s.head(name, {m.vocab_size, d}, m.tie_word_embeddings, /*optional=*/true);
  return s.take();
}

class GptNeoXModel final : public Model {
 public:
  GptNeoXModel(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    embed_ = w.get("embed_in.weight");
    final_ln_ = {w.get("final_layer_norm.weight"), w.get("final_layer_norm.bias")};
    lm_head_ = w.has("embed_out.weight") ? w.get("embed_out.weight")
               : w.has("lm_head.weight") ? w.get("lm_head.weight")
               : config.tie_word_embeddings ? embed_
                                            : at::Tensor();
    const int64_t h = config.num_heads, dh = config.headDim(), d = config.hidden_size;
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto l = layer(i);
      auto g = [&](const std::string& name) { return w.get(l + name); };
      auto maybe = [&](const std::string& name) { return config.attention_bias ? g(name) : at::Tensor(); };
      // Rows of the fused projection are [head][q|k|v][dh]; split them into q, k, v once.
      const auto qkv_w = g("attention.query_key_value.weight").view({h, 3, dh, d});
      const auto qkv_b = maybe("attention.query_key_value.bias");
      auto part_w = [&](int64_t j) { return qkv_w.select(1, j).reshape({d, d}).contiguous(); };
      auto part_b = [&](int64_t j) {
        return qkv_b.defined() ? qkv_b.view({h, 3, dh}).select(1, j).reshape({d}).contiguous() : at::Tensor();
      };
      layers_.push_back({{g("input_layernorm.weight"), g("input_layernorm.bias")}, part_w(0), part_b(0), part_w(1),
                         part_b(1), part_w(2), part_b(2), g("attention.dense.weight"), maybe("attention.dense.bias"),
                         {g("post_attention_layernorm.weight"), g("post_attention_layernorm.bias")},
                         g("mlp.dense_h_to_4h.weight"), g("mlp.dense_h_to_4h.bias"), g("mlp.dense_4h_to_h.weight"),
                         g("mlp.dense_4h_to_h.bias")});
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override {
    const int64_t t = ids.size(1);
    context.rope = rotaryTables(t);
    return at::embedding(embed_, ids);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto& l = layers_[static_cast<size_t>(i)];
    const auto a = ops::layerNorm(x, l.ln_1.w, l.ln_1.b, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto& rope = context.rope;
    const auto q = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, l.q_w, l.q_b, num), c.num_heads), rope));
    const auto k = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, l.k_w, l.k_b, num), c.num_heads), rope));
    const auto v = ops::splitHeads(ops::linear(a, l.v_w, l.v_b, num), c.num_heads);
    const auto attended = ops::linear(ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num)), l.o_w, l.o_b, num);
    // Parallel: the MLP reads the block's input; serial: the input plus the attention.
    const auto mlp_input = c.parallel_residual ? x : num.round(x + attended);
    const auto m = ops::layerNorm(mlp_input, l.ln_2.w, l.ln_2.b, c.norm_eps, num);
    const auto mlp = ops::linear(ops::activation(c.activation, ops::linear(m, l.up_w, l.up_b, num), num), l.down_w,
                                 l.down_b, num);
    return c.parallel_residual ? num.round(num.round(mlp + attended) + x) : num.round(mlp + mlp_input);
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    const auto f = ops::layerNorm(x, final_ln_.w, final_ln_.b, config().norm_eps, numerics());
    if (r.want_final_norm) out.final_norm = f;
    if (r.want_logits && lm_head_.defined()) out.logits = ops::linear(f, lm_head_, {}, numerics());
    return out;
  }

  // RoPE is not in these maps (kernelPositions gives the partial rotation); the key bias
  // rotates with its key and is kept.
  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto& l = layers_.at(static_cast<size_t>(index));
    return arch::perHeadMaps(l.q_w, l.q_b, l.k_w, l.k_b, config().num_heads, config().headDim());
  }

  bool hasLmHead() const override { return lm_head_.defined(); }

 private:
  using Norm = arch::LayerNormWeights;
  struct Layer {
    Norm ln_1;
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
    Norm ln_2;
    at::Tensor up_w, up_b, down_w, down_b;
  };
  at::Tensor embed_, lm_head_;
  Norm final_ln_;
  std::vector<Layer> layers_;
};

}  // namespace

Architecture gptNeoXArchitecture() {
  auto entry = defineArchitecture<GptNeoXModel>({"gpt_neox", "GPT-NeoX", {"gpt_neox."}}, parseConfig, toConfigJson,
                                                tensors, {"gelu", false, PositionScheme::kRope});
  // Pythia's checkpoints hold the causal mask's and RoPE's buffers.
  entry.unused_by_design = {"attention.bias", "attention.masked_bias", "rotary_emb.inv_freq"};
  return entry;
}

}  // namespace posgeom::model
