// GPT-Neo (TinyStories, GPT-Neo 125M-2.7B): GPT-2's learned positions and pre-LN blocks, but
// query, key and value as separate bias-free Linear maps, logits not scaled by 1/sqrt(dh),
// and global and local layers as attention_types lists them (local: the last window_size keys).
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

// GPTNeoConfig's default, which its own check then holds to 24 layers.
const nlohmann::json kDefaultAttentionTypes = nlohmann::json::parse(R"([[["global", "local"], 12]])");

// attention_types [[["global", "local"], 6], ...]: each pattern repeated, one entry per layer.
std::vector<std::string> layerTypes(const io::JsonConfig& c, int64_t layers) {
  const auto& j = c.json();
  const bool given = j.contains("attention_types");
  const auto& list = given ? j["attention_types"] : kDefaultAttentionTypes;
  std::vector<std::string> types;
  if (!list.is_array()) c.fail("attention_types must be a list of [types, repeats]");
  constexpr int64_t kManyLayers = int64_t{1} << 40;
  int64_t total = 0;  // layers the list gives, counted without expanding a huge repeat
  for (const auto& item : list) {
    if (!item.is_array() || item.size() != 2 || !item[0].is_array() || !item[1].is_number_integer())
      c.fail("attention_types must be a list of [types, repeats]");
    const auto repeats = item[1].get<int64_t>();
    if (repeats < 0)
      c.fail("attention_types repeats " + item[0].dump() + " " + item[1].dump() + " times: a repeat count must not be negative");
    for (const auto& t : item[0]) {
      const std::string type = t.is_string() ? t.get<std::string>() : "";
      if (type != "global" && type != "local") c.fail("attention type '" + type + "' is not global or local");
    }
    const auto width = static_cast<int64_t>(item[0].size());
    total = width > 0 && repeats > (kManyLayers - total) / width ? kManyLayers : total + repeats * width;
    for (int64_t r = 0; r < repeats && static_cast<int64_t>(types.size()) < layers; ++r)
      for (const auto& t : item[0]) types.push_back(t.get<std::string>());
  }
  const std::string gives = total == kManyLayers ? "more than 2^40" : std::to_string(total);
  // transformers refuses the mismatch, its default included (it does not fall back to global layers).
  if (!given && total != layers)
    c.fail("attention_types is not set, and transformers' default " + list.dump() + " gives " + gives +
           " layers but num_layers is " + std::to_string(layers) + ": set attention_types, e.g. [[[\"global\"], " +
           std::to_string(layers) + "]]");
  if (total != layers) c.fail("attention_types gives " + gives + " layers but num_layers is " + std::to_string(layers));
  return types;
}

ModelConfig parseConfig(const io::JsonConfig& c) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt({"hidden_size"});
  m.num_layers = c.requirePositiveInt({"num_layers"});
  m.num_heads = c.requirePositiveInt({"num_heads"});
  m.num_kv_heads = m.num_heads;
  const auto& j = c.json();
  m.intermediate_size = j.contains("intermediate_size") && !j["intermediate_size"].is_null()
                            ? c.requirePositiveInt({"intermediate_size"})
                            : 4 * m.hidden_size;
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = c.string({"activation_function"}, "gelu_new");
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported activation_function '" + m.activation + "'");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  const int64_t window = c.positiveInt({"window_size"}, 256);
  for (const auto& type : layerTypes(c, m.num_layers)) m.attention_windows.push_back(type == "local" ? window : 0);
  m.attention_scale = 1.0;  // GPT-Neo's logits are the raw dot products
  m.positions = PositionScheme::kLearned;
  return m;
}

nlohmann::json toConfigJson(const ModelConfig& m) {
  int64_t window = 256;
  nlohmann::json types = nlohmann::json::array();
  for (const int64_t w : m.attention_windows) {
    types.push_back({nlohmann::json::array({w > 0 ? "local" : "global"}), 1});
    if (w > 0) window = w;
  }
  if (m.attention_windows.empty()) types.push_back({nlohmann::json::array({"global"}), m.num_layers});
  return {{"architectures", {"GPTNeoForCausalLM"}},
          {"model_type", "gpt_neo"},
          {"vocab_size", m.vocab_size},
          {"hidden_size", m.hidden_size},
          {"num_layers", m.num_layers},
          {"num_heads", m.num_heads},
          {"intermediate_size", m.intermediate_size},
          {"max_position_embeddings", m.max_positions},
          {"layer_norm_epsilon", m.norm_eps},
          {"activation_function", m.activation},
          {"attention_types", types},
          {"window_size", window},
          {"tie_word_embeddings", m.tie_word_embeddings},
          {"torch_dtype", "float32"}};
}

std::vector<TensorSpec> tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size;
  TensorSpecs s;
  s.table("wte.weight", {m.vocab_size, d}).table("wpe.weight", {m.max_positions, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    const auto b = blockPrefix(i);
    s.norm(b + "ln_1", d);
    for (const char* proj : {"q_proj", "k_proj", "v_proj"}) s.weight(b + "attn.attention." + proj + ".weight", {d, d});
    s.weight(b + "attn.attention.out_proj.weight", {d, d})
        .bias(b + "attn.attention.out_proj.bias", d)
        .norm(b + "ln_2", d)
        .weight(b + "mlp.c_fc.weight", {f, d})
        .bias(b + "mlp.c_fc.bias", f)
        .weight(b + "mlp.c_proj.weight", {d, f})
        .bias(b + "mlp.c_proj.bias", d);
  }
  s.norm("ln_f", d);
  s.head("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings);
  return s.take();
}

class GptNeoModel final : public Model {
 public:
  GptNeoModel(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    wte_ = w.get("wte.weight");
    wpe_ = w.get("wpe.weight");
    ln_f_ = {w.get("ln_f.weight"), w.get("ln_f.bias")};
    lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : wte_;
    for (int64_t i = 0; i < config.num_layers; ++i) {
      const auto b = blockPrefix(i);
      auto g = [&](const std::string& name) { return w.get(b + name); };
      blocks_.push_back({{g("ln_1.weight"), g("ln_1.bias")}, g("attn.attention.q_proj.weight"),
                         g("attn.attention.k_proj.weight"), g("attn.attention.v_proj.weight"),
                         g("attn.attention.out_proj.weight"), g("attn.attention.out_proj.bias"),
                         {g("ln_2.weight"), g("ln_2.bias")}, g("mlp.c_fc.weight"), g("mlp.c_fc.bias"),
                         g("mlp.c_proj.weight"), g("mlp.c_proj.bias")});
    }
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& /*context*/) const override {
    const auto& num = numerics();
    const auto positions = at::arange(ids.size(1), at::TensorOptions().dtype(at::kLong).device(num.device));
    return num.round(at::embedding(wte_, ids) + at::embedding(wpe_, positions));
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto& b = blocks_[static_cast<size_t>(i)];
    const auto a = ops::layerNorm(x, b.ln_1.w, b.ln_1.b, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto q = ops::splitHeads(ops::linear(a, b.q_w, {}, num), c.num_heads);
    const auto k = ops::splitHeads(ops::linear(a, b.k_w, {}, num), c.num_heads);
    const auto v = ops::splitHeads(ops::linear(a, b.v_w, {}, num), c.num_heads);
    const auto attended =
        num.round(x + ops::linear(ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num)), b.o_w, b.o_b, num));
    const auto m = ops::layerNorm(attended, b.ln_2.w, b.ln_2.b, c.norm_eps, num);
    const auto inner = ops::activation(c.activation, ops::linear(m, b.fc_w, b.fc_b, num), num);
    return num.round(attended + ops::linear(inner, b.proj_w, b.proj_b, num));
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
    return arch::perHeadMaps(b.q_w, {}, b.k_w, {}, config().num_heads, config().headDim());
  }

  bool hasLmHead() const override { return true; }

 private:
  using Norm = arch::LayerNormWeights;
  struct Block {
    Norm ln_1;
    at::Tensor q_w, k_w, v_w, o_w, o_b;
    Norm ln_2;
    at::Tensor fc_w, fc_b, proj_w, proj_b;
  };
  at::Tensor wte_, wpe_, lm_head_;
  Norm ln_f_;
  std::vector<Block> blocks_;
};

}  // namespace

Architecture gptNeoArchitecture() {
  auto entry = defineArchitecture<GptNeoModel>({"gpt_neo", "GPT-Neo", {"transformer."}}, parseConfig, toConfigJson,
                                               tensors, {"gelu_new", true, PositionScheme::kLearned});
  entry.layers_key = "num_layers";
  entry.unused_by_design = {"attn.attention.bias", "attn.attention.masked_bias"};  // the causal mask's buffers
  return entry;
}

}  // namespace posgeom::model
