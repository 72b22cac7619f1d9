// BERT: learned absolute positions plus token type 0, post-LN blocks, bidirectional by
// default. hidden.0 is LayerNorm(word + position + type). The MLM head is optional.
// RoBERTa (roberta.cpp) is this model with its own positions and head names (BertStyle).
#include "bert_style.h"
#include "head_maps.h"
#include "posgeom/base/error.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"
#include "posgeom/model/load/weights.h"

namespace posgeom::model {
namespace {

using bert_style::BertStyle;

std::string layer(int64_t i) { return "encoder.layer." + std::to_string(i) + "."; }

ModelConfig readBertConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.requirePositiveInt({"max_position_embeddings"});
  m.type_vocab_size = c.positiveInt({"type_vocab_size"}, 2);
  m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-12);
  m.activation = readActivation(c, "hidden_act", "gelu");
  const auto embedding = c.string({"position_embedding_type"}, "absolute");
  if (embedding != "absolute") c.fail("position_embedding_type '" + embedding + "' is not supported (only 'absolute')");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  m.bidirectional = true;
  m.positions = PositionScheme::kLearned;
  return m;
}

nlohmann::json bertConfigJson(const ModelConfig& m, const BertStyle& style) {
  auto j = sizesJson(m, style.architecture, style.model_type);
  j.update({{"intermediate_size", m.intermediate_size},
          {"hidden_act", m.activation},
          {"max_position_embeddings", m.max_positions},
          {"type_vocab_size", m.type_vocab_size},
          {"layer_norm_eps", m.norm_eps},
          {"position_embedding_type", "absolute"}});
  if (m.padding_idx >= 0) j["pad_token_id"] = m.padding_idx;
  return j;
}

std::vector<TensorSpec> tensors(const ModelConfig& m, const BertStyle& style) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("embeddings.word_embeddings.weight", {m.vocab_size, d})
      .table("embeddings.position_embeddings.weight", {m.max_positions, d})
      .table("embeddings.token_type_embeddings.weight", {m.type_vocab_size, d})
      .norm("embeddings.LayerNorm", d);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
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
  const auto& h = style.head;
  s.outsideBlocks().output(h.dense + ".weight", {d, d})
      .output(h.dense + ".bias", {d})
      .output(h.norm + ".weight", {d})
      .output(h.norm + ".bias", {d})
      .output(h.bias, {m.vocab_size})
      .output(h.decoder + ".weight", {m.vocab_size, d});
  return s.take();
}

class BertModel final : public Model {
 public:
  BertModel(const ModelConfig& config, const Weights& w, const Numerics& num, const BertStyle& style) : Model(config, num) {
    word_ = w.get("embeddings.word_embeddings.weight");
    position_ = w.get("embeddings.position_embeddings.weight");
    type0_ = w.get("embeddings.token_type_embeddings.weight")[0];
    emb_ln_ = {w.get("embeddings.LayerNorm.weight"), w.get("embeddings.LayerNorm.bias")};
    layers_.init(
        config.num_layers,
        [w](int64_t i) {
          const auto l = layer(i);
          auto g = [&](const std::string& name) { return w.get(l + name); };
          return Layer{g("attention.self.query.weight"), g("attention.self.query.bias"),
                       g("attention.self.key.weight"), g("attention.self.key.bias"),
                       g("attention.self.value.weight"), g("attention.self.value.bias"),
                       g("attention.output.dense.weight"), g("attention.output.dense.bias"),
                       {g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias")},
                       g("intermediate.dense.weight"), g("intermediate.dense.bias"),
                       g("output.dense.weight"), g("output.dense.bias"),
                       {g("output.LayerNorm.weight"), g("output.LayerNorm.bias")}};
        },
        w.streamed());
    const auto& h = style.head;
    has_head_ = w.has(h.dense + ".weight") && w.has(h.dense + ".bias") && w.has(h.norm + ".weight") &&
                w.has(h.norm + ".bias") && w.has(h.bias);
    if (has_head_) {
      head_dense_w_ = w.get(h.dense + ".weight");
      head_dense_b_ = w.get(h.dense + ".bias");
      head_ln_ = {w.get(h.norm + ".weight"), w.get(h.norm + ".bias")};
      decoder_ = w.has(h.decoder + ".weight") ? w.get(h.decoder + ".weight") : word_;
      decoder_bias_ = w.get(h.bias);
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& /*context*/) const override {
    const auto& num = numerics();
    const auto emb = num.round(at::embedding(word_, ids) + at::embedding(position_, positionIds(ids)) + type0_);
    return ops::layerNorm(emb, emb_ln_.w, emb_ln_.b, config().norm_eps, num);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto held = layers_.at(i);
    const auto& l = *held;
    context.attentionInput(i, x);  // post-LN: the block input is already normed
    const auto q = ops::splitHeads(ops::linear(x, l.q_w, l.q_b, num), c.num_heads);
    const auto k = ops::splitHeads(ops::linear(x, l.k_w, l.k_b, num), c.num_heads);
    const auto v = ops::splitHeads(ops::linear(x, l.v_w, l.v_b, num), c.num_heads);
    const auto ctx = ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num));
    const auto attended = num.round(ops::linear(ctx, l.o_w, l.o_b, num) + x);
    context.mlpInput(i, attended);  // post-LN: the attention's output norm is the MLP's input norm
    const auto a = ops::layerNorm(attended, l.attn_ln.w, l.attn_ln.b, c.norm_eps, num);
    const auto inner = ops::activation(c.activation, ops::linear(a, l.i_w, l.i_b, num), num);
    return ops::layerNorm(num.round(ops::linear(inner, l.out_w, l.out_b, num) + a), l.out_ln.w, l.out_ln.b, c.norm_eps, num);
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    if (!r.want_logits || !has_head_) return out;
    const auto& c = config();
    const auto& num = numerics();
    const auto t = ops::activation(c.activation, ops::linear(x, head_dense_w_, head_dense_b_, num), num);
    out.logits = ops::linear(ops::layerNorm(t, head_ln_.w, head_ln_.b, c.norm_eps, num), decoder_, decoder_bias_, num);
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto held = layers_.peek(index);
    const auto& l = *held;
    return arch::perHeadMaps(l.q_w, l.q_b, l.k_w, l.k_b, config().num_heads, config().headDim());
  }

  std::optional<NeuronCircuit> neuronCircuit(int64_t seq_len) const override {
    const auto& c = config();
    const auto held = layers_.peek(0);
    const auto& l = *held;
    // A token's block input (the normed embedding) at the window's mean position embedding,
    // the positions of a window without padding.
    const auto positions = positionIds(at::full({1, seq_len}, c.padding_idx < 0 ? 0 : c.padding_idx + 1,
                                                at::TensorOptions().dtype(at::kLong).device(word_.device())))[0];
    const auto e = word_.to(at::kFloat) + at::embedding(position_, positions).to(at::kFloat).mean(0) + type0_.to(at::kFloat);
    const auto tokens = at::layer_norm(e, {c.hidden_size}, emb_ln_.w.to(at::kFloat), emb_ln_.b.to(at::kFloat), c.norm_eps);
    // Post-LN: the attention's output norm is the MLP's input norm.
    return arch::layerNormCircuit(tokens, l.v_w, l.o_w, l.attn_ln, c.norm_eps, l.i_w, l.i_b, c.num_heads, c.headDim());
  }

  bool hasFinalNorm() const override { return false; }
  void readBlockAhead(int64_t index) const override { layers_.readAhead(index); }
  void releaseBlock(int64_t index) const override { layers_.release(index); }
  bool hasLmHead() const override { return has_head_; }

 private:
  // BERT: 0..T-1. RoBERTa: padding_idx + the count of non-padding tokens up to and including
  // each one, and padding_idx itself at a padding token (transformers'
  // create_position_ids_from_input_ids).
  at::Tensor positionIds(const at::Tensor& ids) const {
    const auto& c = config();
    if (c.padding_idx < 0) return at::arange(ids.size(1), at::TensorOptions().dtype(at::kLong).device(ids.device()));
    if (ids.size(1) + c.padding_idx >= c.max_positions)
      throw InputError("input_ids", "sequence length " + std::to_string(ids.size(1)) + " exceeds the model's " +
                                        std::to_string(c.max_positions - c.padding_idx - 1) +
                                        " positions (max_position_embeddings less padding_idx + 1)");
    const auto real = ids.ne(c.padding_idx).to(at::kLong);
    return at::cumsum(real, 1) * real + c.padding_idx;
  }

  using Norm = arch::LayerNormWeights;
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
    Norm attn_ln;
    at::Tensor i_w, i_b, out_w, out_b;
    Norm out_ln;
  };
  at::Tensor word_, position_, type0_;
  Norm emb_ln_;
  StreamedBlocks<Layer> layers_;
  bool has_head_ = false;
  at::Tensor head_dense_w_, head_dense_b_, decoder_, decoder_bias_;
  Norm head_ln_;
};

}  // namespace

namespace bert_style {

Architecture defineFamily(ArchitectureNames names, BertStyle style) {
  auto entry = defineArchitecture(
      std::move(names),
      [style](const io::JsonConfig& c) {
        ModelConfig m = readBertConfig(c);
        if (style.roberta_positions) m.padding_idx = c.positiveInt({"pad_token_id"}, 1);
        return m;
      },
      [style](const ModelConfig& m) { return bertConfigJson(m, style); },
      [style](const ModelConfig& m) { return tensors(m, style); },
      [style](const ModelConfig& c, const Weights& w, const Numerics& n) -> std::unique_ptr<Model> {
        return std::make_unique<BertModel>(c, w, n, style);
      },
      {"gelu", true, PositionScheme::kLearned});
  // The position ids' buffer, the pooler and next-sentence heads (not computed here), and the
  // MLM decoder's bias, which transformers ties to the head's bias.
  entry.unused_by_design = {"embeddings.position_ids", "pooler.dense.weight", "pooler.dense.bias",
                            "cls.seq_relationship.weight", "cls.seq_relationship.bias", style.head.decoder + ".bias"};
  return entry;
}

}  // namespace bert_style

Architecture bertArchitecture() {
  return bert_style::defineFamily({"bert", "BERT", {"bert."}}, {"bert", "BertForMaskedLM", false, {}});
}

}  // namespace posgeom::model
