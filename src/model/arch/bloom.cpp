// BLOOM: no position embeddings, ALiBi biases on the attention logits, a LayerNorm on
// the word embeddings (hidden.0), and query/key/value fused per head as [H, 3, dh].
#include "posgeom/base/error.h"
#include "architectures.h"
#include "head_maps.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/tensor_specs.h"
#include "posgeom/model/load/weights.h"

namespace posgeom::model {
namespace {

std::string blockPrefix(int64_t i) { return "h." + std::to_string(i) + "."; }

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"hidden_size", "n_embed"});
  m.num_layers = c.requirePositiveInt({"n_layer", "num_hidden_layers"});
  m.num_heads = c.requirePositiveInt({"n_head", "num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.intermediate_size = 4 * m.hidden_size;
  m.max_positions = 0;
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = "gelu_new";  // BLOOM's bloom_gelu is the tanh approximation
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  if (c.boolean({"apply_residual_connection_post_layernorm"}, false))
    c.fail("apply_residual_connection_post_layernorm = true is not supported");
  m.positions = PositionScheme::kAlibi;
  return m;
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  return {{"architectures", {"BloomForCausalLM"}},
          {"model_type", "bloom"},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"n_layer", m.num_layers},
          {"n_head", m.num_heads},
          {"layer_norm_epsilon", m.norm_eps},
          {"apply_residual_connection_post_layernorm", false},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("word_embeddings.weight", {m.vocab_size, d}).norm("word_embeddings_layernorm", d);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto b = blockPrefix(i);
    s.norm(b + "input_layernorm", d)
        .weight(b + "self_attention.query_key_value.weight", {3 * d, d})
        .bias(b + "self_attention.query_key_value.bias", 3 * d)
        .weight(b + "self_attention.dense.weight", {d, d})
        .bias(b + "self_attention.dense.bias", d)
        .norm(b + "post_attention_layernorm", d)
        .weight(b + "mlp.dense_h_to_4h.weight", {f, d})
        .bias(b + "mlp.dense_h_to_4h.bias", f)
        .weight(b + "mlp.dense_4h_to_h.weight", {d, f})
        .bias(b + "mlp.dense_4h_to_h.bias", d);
  }
  s.norm("ln_f", d);
  s.head("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings);
  return s.take();
}

class BloomModel final : public Model {
 public:
  BloomModel(const ModelConfig& config, const Weights& w, const Numerics& num)
      : Model(config, num), slopes_(ops::alibiSlopes(config.num_heads)) {
    word_ = w.get("word_embeddings.weight");
    emb_ln_ = {w.get("word_embeddings_layernorm.weight"), w.get("word_embeddings_layernorm.bias")};
    lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : word_;
    ln_f_ = {w.get("ln_f.weight"), w.get("ln_f.bias")};
    const int64_t h = config.num_heads, dh = config.headDim(), d = config.hidden_size;
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto b = blockPrefix(i);
      // Rows of the fused projection are [head][q|k|v][dh]; split them into q, k, v once.
      const auto qkv_w = w.get(b + "self_attention.query_key_value.weight").view({h, 3, dh, d});
      const auto qkv_b = w.get(b + "self_attention.query_key_value.bias").view({h, 3, dh});
      auto part_w = [&](int64_t j) { return qkv_w.select(1, j).reshape({d, d}).contiguous(); };
      auto part_b = [&](int64_t j) { return qkv_b.select(1, j).reshape({d}).contiguous(); };
      blocks_.push_back({{w.get(b + "input_layernorm.weight"), w.get(b + "input_layernorm.bias")},
                         part_w(0), part_b(0), part_w(1), part_b(1), part_w(2), part_b(2),
                         w.get(b + "self_attention.dense.weight"), w.get(b + "self_attention.dense.bias"),
                         {w.get(b + "post_attention_layernorm.weight"), w.get(b + "post_attention_layernorm.bias")},
                         w.get(b + "mlp.dense_h_to_4h.weight"), w.get(b + "mlp.dense_h_to_4h.bias"),
                         w.get(b + "mlp.dense_4h_to_h.weight"), w.get(b + "mlp.dense_4h_to_h.bias")});
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& /*context*/) const override {
    const auto& num = numerics();
    return ops::layerNorm(at::embedding(word_, ids), emb_ln_.w, emb_ln_.b, config().norm_eps, num);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto& b = blocks_[static_cast<size_t>(i)];
    const auto a = ops::layerNorm(x, b.ln_1.w, b.ln_1.b, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto q = ops::splitHeads(ops::linear(a, b.q_w, b.q_b, num), c.num_heads);
    const auto k = ops::splitHeads(ops::linear(a, b.k_w, b.k_b, num), c.num_heads);
    const auto v = ops::splitHeads(ops::linear(a, b.v_w, b.v_b, num), c.num_heads);
    const auto ctx = ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num));
    const auto attended = num.round(x + ops::linear(ctx, b.o_w, b.o_b, num));
    const auto m = ops::layerNorm(attended, b.ln_2.w, b.ln_2.b, c.norm_eps, num);
    const auto inner = ops::activation(c.activation, ops::linear(m, b.up_w, b.up_b, num), num);
    return num.round(attended + ops::linear(inner, b.down_w, b.down_b, num));
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    const auto f = ops::layerNorm(x, ln_f_.w, ln_f_.b, config().norm_eps, numerics());
    if (r.want_final_norm) out.final_norm = f;
    if (r.want_logits) out.logits = ops::linear(f, lm_head_, {}, numerics());
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto& b = blocks_.at(static_cast<size_t>(index));
    return arch::perHeadMaps(b.q_w, b.q_b, b.k_w, b.k_b, config().num_heads, config().headDim());
  }

  bool hasLmHead() const override { return true; }
  at::Tensor alibiSlopes() const override { return slopes_; }
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override {
    return alibiKernelPositions(slopes_, block, seq_len);
  }

 private:
  using Norm = arch::LayerNormWeights;
  struct Block {
    Norm ln_1;
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
    Norm ln_2;
    at::Tensor up_w, up_b, down_w, down_b;
  };
  at::Tensor slopes_, word_, lm_head_;
  Norm emb_ln_, ln_f_;
  std::vector<Block> blocks_;
};

}  // namespace

Architecture bloomArchitecture() {
  auto entry = defineArchitecture<BloomModel>({"bloom", "BLOOM", {"transformer."}}, parseConfig, toConfigJson, tensors,
                                              {"gelu_new", true, PositionScheme::kAlibi});
  entry.layers_key = "n_layer";
  return entry;
}

}  // namespace posgeom::model
