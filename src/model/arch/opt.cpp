// OPT: learned positions stored two rows past their index (row t + 2 for position t), LayerNorm
// before each block (or after, with do_layer_norm_before false: OPT-350m), ReLU MLP, and for
// OPT-350m embeddings narrower than the blocks (project_in / project_out).
#include "architectures.h"
#include "head_maps.h"
#include "posgeom/base/error.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model {
namespace {

constexpr int64_t kPositionOffset = 2;  // OPTLearnedPositionalEmbedding's offset

std::string layer(int64_t i) { return "decoder.layers." + std::to_string(i) + "."; }

// word_embed_proj_dim: narrower than the blocks in OPT-350m.
int64_t embeddingWidth(const ModelConfig& m) { return m.embedding_width > 0 ? m.embedding_width : m.hidden_size; }

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"hidden_size"});
  m.num_layers = c.requirePositiveInt({"num_hidden_layers"});
  m.num_heads = c.requirePositiveInt({"num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.intermediate_size = c.requirePositiveInt({"ffn_dim"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = 1e-5;  // nn.LayerNorm's default: OPT's configs have no key for it
  m.activation = c.string({"activation_function"}, "relu");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported activation_function '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  m.attention_bias = c.boolean({"enable_bias"}, true);
  m.post_norm = !c.boolean({"do_layer_norm_before"}, true);
  m.embedding_width = c.positiveInt({"word_embed_proj_dim"}, m.hidden_size);
  if (!c.boolean({"layer_norm_elementwise_affine"}, true)) c.fail("layer_norm_elementwise_affine = false is not supported");
  if (c.boolean({"_remove_final_layer_norm"}, false)) c.fail("_remove_final_layer_norm = true is not supported");
  if (m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  m.positions = PositionScheme::kLearned;
  return m;
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  return {{"architectures", {"OPTForCausalLM"}},
          {"model_type", "opt"},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"num_hidden_layers", m.num_layers},
          {"num_attention_heads", m.num_heads},
          {"ffn_dim", m.intermediate_size},
          {"max_position_embeddings", m.max_positions},
          {"activation_function", m.activation},
          {"do_layer_norm_before", !m.post_norm},
          {"word_embed_proj_dim", embeddingWidth(m)},
          {"enable_bias", m.attention_bias},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size, e = embeddingWidth(m);
  TensorSpecs s;
  s.table("decoder.embed_tokens.weight", {m.vocab_size, e})
      .table("decoder.embed_positions.weight", {m.max_positions + kPositionOffset, d});
  if (e != d) s.weight("decoder.project_in.weight", {d, e}).weight("decoder.project_out.weight", {e, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto l = layer(i);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) {
      s.weight(l + "self_attn." + proj + ".weight", {d, d});
      if (m.attention_bias) s.bias(l + "self_attn." + proj + ".bias", d);
    }
    s.norm(l + "self_attn_layer_norm", d).weight(l + "fc1.weight", {f, d});
    if (m.attention_bias) s.bias(l + "fc1.bias", f);
    s.weight(l + "fc2.weight", {d, f});
    if (m.attention_bias) s.bias(l + "fc2.bias", d);
    s.norm(l + "final_layer_norm", d);
  }
  if (!m.post_norm) s.norm("decoder.final_layer_norm", d);
  s.head("lm_head.weight", {m.vocab_size, e}, m.tie_word_embeddings);
  return s.take();
}

class OptModel final : public Model {
 public:
  OptModel(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    embed_ = w.get("decoder.embed_tokens.weight");
    positions_ = w.get("decoder.embed_positions.weight");
    if (w.has("decoder.project_in.weight")) {
      project_in_ = w.get("decoder.project_in.weight");
      project_out_ = w.get("decoder.project_out.weight");
    }
    if (!config.post_norm) final_ln_ = {w.get("decoder.final_layer_norm.weight"), w.get("decoder.final_layer_norm.bias")};
    lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : embed_;
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto l = layer(i);
      auto g = [&](const std::string& name) { return w.get(l + name); };
      auto bias = [&](const std::string& name) { return config.attention_bias ? g(name) : at::Tensor(); };
      layers_.push_back({g("self_attn.q_proj.weight"), bias("self_attn.q_proj.bias"), g("self_attn.k_proj.weight"),
                         bias("self_attn.k_proj.bias"), g("self_attn.v_proj.weight"), bias("self_attn.v_proj.bias"),
                         g("self_attn.out_proj.weight"), bias("self_attn.out_proj.bias"),
                         {g("self_attn_layer_norm.weight"), g("self_attn_layer_norm.bias")}, g("fc1.weight"),
                         bias("fc1.bias"), g("fc2.weight"), bias("fc2.bias"),
                         {g("final_layer_norm.weight"), g("final_layer_norm.bias")}});
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& /*context*/) const override {
    const auto& num = numerics();
    const auto rows = at::arange(ids.size(1), at::TensorOptions().dtype(at::kLong).device(num.device)) + kPositionOffset;
    auto tokens = at::embedding(embed_, ids);
    if (project_in_.defined()) tokens = ops::linear(tokens, project_in_, {}, num);
    return num.round(tokens + at::embedding(positions_, rows));
  }

  at::Tensor block(int64_t i, const at::Tensor& input, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto& l = layers_[static_cast<size_t>(i)];
    auto x = input;
    const auto a = c.post_norm ? x : norm(x, l.attn_ln);
    context.attentionInput(i, a);
    const auto q = ops::splitHeads(ops::linear(a, l.q_w, l.q_b, num), c.num_heads);
    const auto k = ops::splitHeads(ops::linear(a, l.k_w, l.k_b, num), c.num_heads);
    const auto v = ops::splitHeads(ops::linear(a, l.v_w, l.v_b, num), c.num_heads);
    x = num.round(x + ops::linear(ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num)), l.o_w, l.o_b, num));
    if (c.post_norm) x = norm(x, l.attn_ln);
    const auto m = c.post_norm ? x : norm(x, l.mlp_ln);
    x = num.round(x + ops::linear(ops::activation(c.activation, ops::linear(m, l.fc1_w, l.fc1_b, num), num), l.fc2_w,
                                  l.fc2_b, num));
    return c.post_norm ? norm(x, l.mlp_ln) : x;
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    // transformers' last_hidden_state: the final norm (pre-LN models), then project_out.
    auto f = final_ln_.w.defined() ? norm(x, final_ln_) : x;
    if (project_out_.defined()) f = ops::linear(f, project_out_, {}, numerics());
    if (r.want_final_norm && hasFinalNorm()) out.final_norm = f;
    if (r.want_logits) out.logits = ops::linear(f, lm_head_, {}, numerics());
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto& l = layers_.at(static_cast<size_t>(index));
    return arch::perHeadMaps(l.q_w, l.q_b, l.k_w, l.k_b, config().num_heads, config().headDim());
  }

  bool hasFinalNorm() const override { return final_ln_.w.defined() || project_out_.defined(); }
  bool hasLmHead() const override { return true; }

 private:
  using Norm = arch::LayerNormWeights;
  at::Tensor norm(const at::Tensor& t, const Norm& n) const { return ops::layerNorm(t, n.w, n.b, config().norm_eps, numerics()); }
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b;
    Norm attn_ln;
    at::Tensor fc1_w, fc1_b, fc2_w, fc2_b;
    Norm mlp_ln;
  };
  at::Tensor embed_, positions_, project_in_, project_out_, lm_head_;
  Norm final_ln_;
  std::vector<Layer> layers_;
};

}  // namespace

Architecture optArchitecture() {
  return defineArchitecture<OptModel>({"opt", "OPT", {"model."}}, parseConfig, toConfigJson, tensors,
                                      {"relu", true, PositionScheme::kLearned});
}

}  // namespace posgeom::model
