// GPT-J: RoPE on the first rotary_dim dims of each head, turning interleaved pairs (2j, 2j + 1)
// (rotate_every_two), one LayerNorm feeding attention and MLP in parallel, bias-free q, k, v
// and output maps, an LM head with a bias.
#include <cmath>

#include "architectures.h"
#include "head_maps.h"
#include "posgeom/base/error.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model {
namespace {

std::string blockPrefix(int64_t i) { return "h." + std::to_string(i) + "."; }

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"n_embd"});
  m.num_layers = c.requirePositiveInt({"n_layer"});
  m.num_heads = c.requirePositiveInt({"n_head"});
  m.num_kv_heads = m.num_heads;
  const auto& j = c.json();
  m.intermediate_size =
      j.contains("n_inner") && !j["n_inner"].is_null() ? c.requirePositiveInt({"n_inner"}) : 4 * m.hidden_size;
  m.max_positions = c.positiveInt({"n_positions"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = c.string({"activation_function"}, "gelu_new");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported activation_function '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  if (m.hidden_size % m.num_heads != 0) c.fail("n_embd is not divisible by n_head");
  // rotary_dim null: the whole head turns. GPT-J's base is fixed at 10000.
  const int64_t rotary =
      j.contains("rotary_dim") && j["rotary_dim"].is_null() ? m.headDim() : c.positiveInt({"rotary_dim"}, 64);
  if (rotary > m.headDim() || rotary % 2 != 0)
    c.fail("rotary_dim must be even and at most the head dim " + std::to_string(m.headDim()));
  m.rope.partial_rotary_factor = static_cast<double>(rotary) / static_cast<double>(m.headDim());
  m.rope.interleaved = true;
  m.parallel_residual = true;
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  return {{"architectures", {"GPTJForCausalLM"}},
          {"model_type", "gptj"},
          {"vocab_size", m.vocab_size},
          {"n_embd", m.hidden_size},
          {"n_layer", m.num_layers},
          {"n_head", m.num_heads},
          {"n_inner", m.intermediate_size},
          {"n_positions", m.max_positions},
          {"rotary_dim", static_cast<int64_t>(std::lround(static_cast<double>(m.headDim()) * m.rope.partial_rotary_factor))},
          {"layer_norm_epsilon", m.norm_eps},
          {"activation_function", m.activation},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("wte.weight", {m.vocab_size, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto b = blockPrefix(i);
    s.norm(b + "ln_1", d);
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "out_proj"}) s.weight(b + "attn." + proj + ".weight", {d, d});
    s.weight(b + "mlp.fc_in.weight", {f, d})
        .bias(b + "mlp.fc_in.bias", f)
        .weight(b + "mlp.fc_out.weight", {d, f})
        .bias(b + "mlp.fc_out.bias", d);
  }
  s.norm("ln_f", d);
  s.head("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings).output("lm_head.bias", {m.vocab_size});
  return s.take();
}

class GptJModel final : public Model {
 public:
  GptJModel(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    wte_ = w.get("wte.weight");
    ln_f_ = {w.get("ln_f.weight"), w.get("ln_f.bias")};
    lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : wte_;
    if (w.has("lm_head.bias")) lm_head_bias_ = w.get("lm_head.bias");
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto b = blockPrefix(i);
      auto g = [&](const std::string& name) { return w.get(b + name); };
      blocks_.push_back({{g("ln_1.weight"), g("ln_1.bias")}, g("attn.q_proj.weight"), g("attn.k_proj.weight"),
                         g("attn.v_proj.weight"), g("attn.out_proj.weight"), g("mlp.fc_in.weight"), g("mlp.fc_in.bias"),
                         g("mlp.fc_out.weight"), g("mlp.fc_out.bias")});
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override {
    const int64_t t = ids.size(1);
    context.rope = rotaryTables(t);
    return at::embedding(wte_, ids);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto& b = blocks_[static_cast<size_t>(i)];
    const auto a = ops::layerNorm(x, b.ln_1.w, b.ln_1.b, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto& rope = context.rope;
    const auto q = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, b.q_w, {}, num), c.num_heads), rope));
    const auto k = num.round(ops::applyRotary(ops::splitHeads(ops::linear(a, b.k_w, {}, num), c.num_heads), rope));
    const auto v = ops::splitHeads(ops::linear(a, b.v_w, {}, num), c.num_heads);
    const auto attended = ops::linear(ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num)), b.o_w, {}, num);
    const auto mlp = ops::linear(ops::activation(c.activation, ops::linear(a, b.fc_in_w, b.fc_in_b, num), num),
                                 b.fc_out_w, b.fc_out_b, num);
    return num.round(num.round(attended + mlp) + x);
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    const auto f = ops::layerNorm(x, ln_f_.w, ln_f_.b, config().norm_eps, numerics());
    if (r.want_final_norm) out.final_norm = f;
    if (r.want_logits) out.logits = ops::linear(f, lm_head_, lm_head_bias_, numerics());
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto& b = blocks_.at(static_cast<size_t>(index));
    return arch::perHeadMaps(b.q_w, {}, b.k_w, {}, config().num_heads, config().headDim());
  }

  bool hasLmHead() const override { return true; }

 private:
  using Norm = arch::LayerNormWeights;
  struct Block {
    Norm ln_1;
    at::Tensor q_w, k_w, v_w, o_w, fc_in_w, fc_in_b, fc_out_w, fc_out_b;
  };
  at::Tensor wte_, lm_head_, lm_head_bias_;
  Norm ln_f_;
  std::vector<Block> blocks_;
};

}  // namespace

Architecture gptJArchitecture() {
  auto entry = defineArchitecture<GptJModel>({"gptj", "GPT-J", {"transformer."}}, parseConfig, toConfigJson, tensors,
                                             {"gelu_new", false, PositionScheme::kRope});
  entry.layers_key = "n_layer";
  entry.unused_by_design = {"attn.bias", "attn.masked_bias"};  // the causal mask's buffers
  return entry;
}

}  // namespace posgeom::model
