// BERT: learned absolute positions plus token type 0, post-LN blocks, bidirectional by
// default. hidden.0 is LayerNorm(word + position + type). The MLM head is optional.
#include "posgeom/base/error.h"
#include "architectures.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/tensor_specs.h"
#include "posgeom/model/load/weights.h"

namespace posgeom::model {
namespace {

std::string layer(int64_t i) { return "encoder.layer." + std::to_string(i) + "."; }

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"hidden_size"});
  m.num_layers = c.requirePositiveInt({"num_hidden_layers"});
  m.num_heads = c.requirePositiveInt({"num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.requirePositiveInt({"max_position_embeddings"});
  m.type_vocab_size = c.positiveInt({"type_vocab_size"}, 2);
  m.norm_eps = c.number({"layer_norm_eps"}, 1e-12);
  m.activation = c.string({"hidden_act"}, "gelu");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported hidden_act '" + m.activation + "'");
  const auto embedding = c.string({"position_embedding_type"}, "absolute");
  if (embedding != "absolute") c.fail("position_embedding_type '" + embedding + "' is not supported (only 'absolute')");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  m.bidirectional = true;
  m.positions = PositionScheme::kLearned;
  return m;
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  return {{"architectures", {"BertForMaskedLM"}},
          {"model_type", "bert"},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"num_hidden_layers", m.num_layers},
          {"num_attention_heads", m.num_heads},
          {"intermediate_size", m.intermediate_size},
          {"hidden_act", m.activation},
          {"max_position_embeddings", m.max_positions},
          {"type_vocab_size", m.type_vocab_size},
          {"layer_norm_eps", m.norm_eps},
          {"position_embedding_type", "absolute"},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("embeddings.word_embeddings.weight", {m.vocab_size, d})
      .table("embeddings.position_embeddings.weight", {m.max_positions, d})
      .table("embeddings.token_type_embeddings.weight", {m.type_vocab_size, d})
      .norm("embeddings.LayerNorm", d);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto l = layer(i);
    for (const char* proj : {"query", "key", "value"})
      s.weight(l + "attention.self." + proj + ".weight", {d, d}).bias(l + "attention.self." + proj + ".bias", d);
    s.weight(l + "attention.output.dense.weight", {d, d})
        .bias(l + "attention.output.dense.bias", d)
        .norm(l + "attention.output.LayerNorm", d)
        .weight(l + "intermediate.dense.weight", {f, d})
        .bias(l + "intermediate.dense.bias", f)
        .weight(l + "output.dense.weight", {d, f})
        .bias(l + "output.dense.bias", d)
        .norm(l + "output.LayerNorm", d);
  }
  // The MLM head, present in BertForMaskedLM / BertForPreTraining checkpoints.
  s.output("cls.predictions.transform.dense.weight", {d, d})
      .output("cls.predictions.transform.dense.bias", {d})
      .output("cls.predictions.transform.LayerNorm.weight", {d})
      .output("cls.predictions.transform.LayerNorm.bias", {d})
      .output("cls.predictions.bias", {m.vocab_size})
      .output("cls.predictions.decoder.weight", {m.vocab_size, d});
  return s.take();
}

class BertModel final : public Model {
 public:
  BertModel(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    word_ = w.get("embeddings.word_embeddings.weight");
    position_ = w.get("embeddings.position_embeddings.weight");
    type0_ = w.get("embeddings.token_type_embeddings.weight")[0];
    emb_ln_ = {w.get("embeddings.LayerNorm.weight"), w.get("embeddings.LayerNorm.bias")};
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto l = layer(i);
      auto g = [&](const std::string& name) { return w.get(l + name); };
      layers_.push_back({g("attention.self.query.weight"), g("attention.self.query.bias"),
                         g("attention.self.key.weight"), g("attention.self.key.bias"),
                         g("attention.self.value.weight"), g("attention.self.value.bias"),
                         g("attention.output.dense.weight"), g("attention.output.dense.bias"),
                         {g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias")},
                         g("intermediate.dense.weight"), g("intermediate.dense.bias"),
                         g("output.dense.weight"), g("output.dense.bias"),
                         {g("output.LayerNorm.weight"), g("output.LayerNorm.bias")}});
    }
    const std::string head = "cls.predictions.";
    has_head_ = w.has(head + "transform.dense.weight") && w.has(head + "transform.dense.bias") &&
                w.has(head + "transform.LayerNorm.weight") && w.has(head + "transform.LayerNorm.bias") &&
                w.has(head + "bias");
    if (has_head_) {
      head_dense_w_ = w.get(head + "transform.dense.weight");
      head_dense_b_ = w.get(head + "transform.dense.bias");
      head_ln_ = {w.get(head + "transform.LayerNorm.weight"), w.get(head + "transform.LayerNorm.bias")};
      decoder_ = w.has(head + "decoder.weight") ? w.get(head + "decoder.weight") : word_;
      decoder_bias_ = w.get(head + "bias");
    }
  }

  ForwardOutputs forward(const ForwardRequest& r) const override {
    const auto& c = config();
    const auto& num = numerics();
    const bool causal = causalFor(r);
    const int64_t last = lastLayerFor(r);
    const auto ids = idsOnDevice(r.ids);
    const auto positions = at::arange(ids.size(1), at::TensorOptions().dtype(at::kLong).device(num.device));
    const auto emb = num.round(at::embedding(word_, ids) + at::embedding(position_, positions) + type0_);
    auto x = ops::layerNorm(emb, emb_ln_.w, emb_ln_.b, c.norm_eps, num);
    emitHidden(r, 0, x);
    for (int64_t i = 0; i < last; ++i) {
      const auto& l = layers_[static_cast<size_t>(i)];
      emitAttentionInput(r, i, x);  // post-LN: the block input is already normed
      const auto q = ops::splitHeads(ops::linear(x, l.q_w, l.q_b, num), c.num_heads);
      const auto k = ops::splitHeads(ops::linear(x, l.k_w, l.k_b, num), c.num_heads);
      const auto v = ops::splitHeads(ops::linear(x, l.v_w, l.v_b, num), c.num_heads);
      const auto ctx = ops::mergeHeads(ops::attention(q, k, v, causal, {}, num));
      const auto a = ops::layerNorm(num.round(ops::linear(ctx, l.o_w, l.o_b, num) + x), l.attn_ln.w, l.attn_ln.b,
                                    c.norm_eps, num);
      const auto inner = ops::activation(c.activation, ops::linear(a, l.i_w, l.i_b, num), num);
      x = ops::layerNorm(num.round(ops::linear(inner, l.out_w, l.out_b, num) + a), l.out_ln.w, l.out_ln.b,
                         c.norm_eps, num);
      emitHidden(r, i + 1, x);
    }
    ForwardOutputs out;
    if (r.want_logits && has_head_ && last == c.num_layers) {
      const auto t = ops::activation(c.activation, ops::linear(x, head_dense_w_, head_dense_b_, num), num);
      out.logits = ops::linear(ops::layerNorm(t, head_ln_.w, head_ln_.b, c.norm_eps, num), decoder_, decoder_bias_, num);
    }
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto& c = config();
    const auto& l = layers_.at(static_cast<size_t>(index));
    const int64_t h = c.num_heads, dh = c.headDim(), d = c.hidden_size;
    auto w = [&](const at::Tensor& t) { return t.to(at::kFloat).reshape({h, dh, d}); };
    auto b = [&](const at::Tensor& t) { return t.to(at::kFloat).reshape({h, dh}); };
    return {w(l.q_w), b(l.q_b), w(l.k_w), b(l.k_b)};
  }

  KernelPositions kernelPositions() const override { return {}; }  // learned positions, in the inputs

  bool hasFinalNorm() const override { return false; }
  bool hasLmHead() const override { return has_head_; }

 private:
  struct Norm {
    at::Tensor w, b;
  };
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
    Norm attn_ln;
    at::Tensor i_w, i_b, out_w, out_b;
    Norm out_ln;
  };
  at::Tensor word_, position_, type0_;
  Norm emb_ln_;
  std::vector<Layer> layers_;
  bool has_head_ = false;
  at::Tensor head_dense_w_, head_dense_b_, decoder_, decoder_bias_;
  Norm head_ln_;
};

}  // namespace

Architecture bertArchitecture() {
  return defineArchitecture<BertModel>({"bert", "BERT", {"bert."}}, parseConfig, toConfigJson, tensors,
                                   {"gelu", true, PositionScheme::kLearned});
}

}  // namespace posgeom::model
