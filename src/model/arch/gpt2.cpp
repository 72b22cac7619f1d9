// GPT-2 (gpt2 .. gpt2-xl): learned absolute positions, pre-LN blocks, Conv1D weights
// stored [in, out], LM head tied to the token embedding unless lm_head.weight is given.
// Models trained by `posgeom train` may instead have no positional encoding or ALiBi
// ("posgeom_position_encoding": "none" or "alibi" in config.json; no wpe then).
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
  m.hidden_size = c.requirePositiveInt({"n_embd", "hidden_size"});
  m.num_layers = c.requirePositiveInt({"n_layer", "num_hidden_layers"});
  m.num_heads = c.requirePositiveInt({"n_head", "num_attention_heads"});
  m.num_kv_heads = m.num_heads;
  m.max_positions = c.requirePositiveInt({"n_positions", "max_position_embeddings"});
  m.intermediate_size = c.positiveInt({"n_inner", "intermediate_size"}, 4 * m.hidden_size);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = c.string({"activation_function"}, "gelu_new");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported activation_function '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  const auto encoding = c.string({"posgeom_position_encoding"}, "learned");
  if (encoding == "learned") m.positions = PositionScheme::kLearned;
  else if (encoding == "alibi") m.positions = PositionScheme::kAlibi;
  else if (encoding == "none") m.positions = PositionScheme::kNone;
  else c.fail("posgeom_position_encoding must be learned, alibi or none, not '" + encoding + "'");
  return m;
}

const char* encodingName(PositionScheme p) {
  return p == PositionScheme::kAlibi ? "alibi" : p == PositionScheme::kNone ? "none" : "learned";
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  nlohmann::json j = {{"architectures", {"GPT2LMHeadModel"}}, {"model_type", "gpt2"},
          {"vocab_size", m.vocab_size},           {"n_embd", m.hidden_size},
          {"n_layer", m.num_layers},              {"n_head", m.num_heads},
          {"n_positions", m.max_positions},       {"n_ctx", m.max_positions},
          {"n_inner", m.intermediate_size},       {"activation_function", m.activation},
          {"layer_norm_epsilon", m.norm_eps},     {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
  if (m.positions != PositionScheme::kLearned) j["posgeom_position_encoding"] = encodingName(m.positions);
  return j;
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("wte.weight", {m.vocab_size, d});
  if (m.positions == PositionScheme::kLearned) s.table("wpe.weight", {m.max_positions, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto b = blockPrefix(i);
    s.norm(b + "ln_1", d)
        .weight(b + "attn.c_attn.weight", {d, 3 * d})
        .bias(b + "attn.c_attn.bias", 3 * d)
        .weight(b + "attn.c_proj.weight", {d, d})
        .bias(b + "attn.c_proj.bias", d)
        .norm(b + "ln_2", d)
        .weight(b + "mlp.c_fc.weight", {d, f})
        .bias(b + "mlp.c_fc.bias", f)
        .weight(b + "mlp.c_proj.weight", {f, d})
        .bias(b + "mlp.c_proj.bias", d);
  }
  s.norm("ln_f", d);
  s.head("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings);
  return s.take();
}

class Gpt2Model final : public Model {
 public:
  Gpt2Model(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    wte_ = w.get("wte.weight");
    if (config.positions == PositionScheme::kLearned) wpe_ = w.get("wpe.weight");
    if (config.positions == PositionScheme::kAlibi) slopes_ = ops::alibiSlopes(config.num_heads);
    lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : wte_;
    ln_f_ = {w.get("ln_f.weight"), w.get("ln_f.bias")};
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto b = blockPrefix(i);
      // Conv1D stores [in, out]: its transposed view is the [out, in] of a linear layer, which
      // the BLAS reads as it is (a contiguous copy would double the weights' memory).
      auto t = [&](const std::string& name) { return w.get(b + name).t(); };
      blocks_.push_back({{w.get(b + "ln_1.weight"), w.get(b + "ln_1.bias")},
                         t("attn.c_attn.weight"), w.get(b + "attn.c_attn.bias"),
                         t("attn.c_proj.weight"), w.get(b + "attn.c_proj.bias"),
                         {w.get(b + "ln_2.weight"), w.get(b + "ln_2.bias")},
                         t("mlp.c_fc.weight"), w.get(b + "mlp.c_fc.bias"),
                         t("mlp.c_proj.weight"), w.get(b + "mlp.c_proj.bias")});
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override {
    const auto& num = numerics();
    auto x = at::embedding(wte_, ids);
    if (wpe_.defined())
      x = x + at::embedding(wpe_, at::arange(ids.size(1), at::TensorOptions().dtype(at::kLong).device(num.device)));
    return context.drop(num.round(x));
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto& b = blocks_[static_cast<size_t>(i)];
    const auto a = ops::layerNorm(x, b.ln_1.w, b.ln_1.b, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto qkv = ops::linear(a, b.c_attn_w, b.c_attn_b, num).chunk(3, -1);
    const auto ctx = ops::attention(ops::splitHeads(qkv[0], c.num_heads), ops::splitHeads(qkv[1], c.num_heads),
                                    ops::splitHeads(qkv[2], c.num_heads), attentionShape(i, context), num);
    const auto attended = num.round(x + context.drop(ops::linear(ops::mergeHeads(ctx), b.c_proj_w, b.c_proj_b, num)));
    context.mlpInput(i, attended);
    const auto m = ops::layerNorm(attended, b.ln_2.w, b.ln_2.b, c.norm_eps, num);
    const auto hidden = ops::activation(c.activation, ops::linear(m, b.fc_w, b.fc_b, num), num);
    return num.round(attended + context.drop(ops::linear(hidden, b.proj_w, b.proj_b, num)));
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    const auto f = ops::layerNorm(x, ln_f_.w, ln_f_.b, config().norm_eps, numerics());
    if (r.want_final_norm) out.final_norm = f;
    if (r.want_logits) out.logits = ops::linear(f, lm_head_, {}, numerics());
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t block_index) const override {
    const auto& b = blocks_.at(static_cast<size_t>(block_index));
    const int64_t d = config().hidden_size;  // c_attn's rows: q | k | v
    return arch::perHeadMaps(b.c_attn_w.narrow(0, 0, d), b.c_attn_b.narrow(0, 0, d), b.c_attn_w.narrow(0, d, d),
                             b.c_attn_b.narrow(0, d, d), config().num_heads, config().headDim());
  }

  std::optional<NeuronCircuit> neuronCircuit(int64_t seq_len) const override {
    const auto& c = config();
    const auto& b = blocks_.front();
    // A token's attention input at the window's mean position embedding.
    auto e = wte_.to(at::kFloat);
    if (wpe_.defined()) e = e + wpe_.narrow(0, 0, seq_len).to(at::kFloat).mean(0);
    const auto tokens = at::layer_norm(e, {c.hidden_size}, b.ln_1.w.to(at::kFloat), b.ln_1.b.to(at::kFloat), c.norm_eps);
    return arch::layerNormCircuit(tokens, b.c_attn_w.narrow(0, 2 * c.hidden_size, c.hidden_size), b.c_proj_w, b.ln_2,
                                  c.norm_eps, b.fc_w, b.fc_b, c.num_heads, c.headDim());
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
    at::Tensor c_attn_w, c_attn_b, c_proj_w, c_proj_b;
    Norm ln_2;
    at::Tensor fc_w, fc_b, proj_w, proj_b;
  };
  at::Tensor wte_, wpe_, lm_head_, slopes_;  // wpe_ or slopes_ undefined unless that encoding
  Norm ln_f_;
  std::vector<Block> blocks_;
};

}  // namespace

Architecture gpt2Architecture() {
  auto entry = defineArchitecture<Gpt2Model>({"gpt2", "GPT-2", {"transformer."}}, parseConfig, toConfigJson, tensors,
                                             {"gelu_new", true, PositionScheme::kLearned}, /*supports_dropout=*/true);
  entry.layers_key = "n_layer";
  entry.unused_by_design = {"attn.bias", "attn.masked_bias"};  // the causal mask's buffers
  return entry;
}

}  // namespace posgeom::model
