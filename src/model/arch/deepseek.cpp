// DeepSeek-V2 and DeepSeek-V3: Llama's pre-norm blocks (RMSNorm, gated SiLU MLP, untied
// head) with multi-head latent attention (ModelConfig::LatentAttention) and, from block
// first_k_dense_replace on, a mixture of experts (mixture.cpp's grouped routing) beside
// shared experts that every token runs. Attention: q from q_proj, or from q_b_proj of the
// RMSNormed q_a_proj (q_lora_rank); kv_a_proj_with_mqa gives the kv_lora_rank latent, RMSNormed
// (kv_a_layernorm, eps 1e-6 as transformers' default) and mapped by kv_b_proj to each head's
// qk_nope_head_dim key dims and v_head_dim value dims, and qk_rope_head_dim dims that every head
// shares as the rotary part of its key; each head's query is [nope | rope], its key
// [nope | the shared rope part]. RoPE turns the rope parts only: V3 in interleaved pairs
// (rope_interleave, its default) or Hugging Face's halves; V2 in interleaved pairs in float32,
// as complex numbers. Logits scale by (nope + rope)^-1/2, times YaRN's
// (0.1 mscale_all_dim ln factor + 1)^2. Routing: V3 sigmoid scores with e_score_correction_bias
// for the choice, n_group groups of which topk_group by their two best; V2 softmax, greedy or
// group_limited_greedy; norm_topk_prob (V3 only), routed_scaling_factor. FP8 checkpoints
// (quantization_config) are refused by name; --neurons is not available (the values come
// through a normed latent).
#include <cmath>

#include "architectures.h"
#include "posgeom/base/error.h"
#include "llama_style.h"
#include "mixture.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model {
namespace {

constexpr double kLatentNormEps = 1e-6;  // q_a_layernorm's and kv_a_layernorm's: transformers' default, not rms_norm_eps

std::string deepseekLayer(int64_t i) { return "layers." + std::to_string(i) + "."; }

// A latent's rank: null (or absent with `fallback` 0) for none.
int64_t nullableRank(const io::JsonConfig& c, const char* key, int64_t fallback) {
  const auto& j = c.json();
  if (j.contains(key) && j[key].is_null()) return 0;
  return c.positiveInt({key}, fallback);
}

void readLatentAttention(const io::JsonConfig& c, ModelConfig& m, bool v3) {
  auto& a = m.latent;
  a.q_rank = nullableRank(c, "q_lora_rank", 1536);
  a.kv_rank = c.positiveInt({"kv_lora_rank"}, 512);
  a.nope_dims = c.positiveInt({"qk_nope_head_dim"}, 128);
  a.rope_dims = c.positiveInt({"qk_rope_head_dim"}, 64);
  a.value_dims = c.positiveInt({"v_head_dim"}, 128);
  if (a.rope_dims % 2 != 0) c.fail("qk_rope_head_dim must be even: RoPE turns pairs of dims (here " + std::to_string(a.rope_dims) + ")");
  a.float32_rope = !v3;
  m.head_dim = a.nope_dims + a.rope_dims;
  m.rope.partial_rotary_factor = 1.0;  // the rope part is its own: kernelPositions turns rope_dims
  m.rope.interleaved = v3 ? c.boolean({"rope_interleave"}, true) : true;
  if (m.num_kv_heads != m.num_heads)
    c.fail("num_key_value_heads (" + std::to_string(m.num_kv_heads) + ") must equal num_attention_heads (" +
           std::to_string(m.num_heads) + "): latent attention makes every head's key");
  // transformers' yarn_apply_mscale, for any scaled RoPE that gives mscale_all_dim.
  if (m.rope.type != "default" && m.rope.mscale_all_dim > 0) {
    const double mscale = m.rope.factor <= 1 ? 1.0 : 0.1 * m.rope.mscale_all_dim * std::log(m.rope.factor) + 1.0;
    m.attention_scale = mscale * mscale / std::sqrt(static_cast<double>(m.head_dim));
  }
}

void readRouting(const io::JsonConfig& c, ModelConfig& m, bool v3) {
  auto& moe = m.moe;
  moe.experts = c.positiveInt({"n_routed_experts", v3 ? "num_local_experts" : "num_experts"}, v3 ? 256 : 64);
  moe.experts_per_token = v3 ? c.positiveInt({"num_experts_per_tok"}, 8) : c.requirePositiveInt({"num_experts_per_tok"});
  moe.expert_size = c.positiveInt({"moe_intermediate_size"}, v3 ? 2048 : 1407);
  moe.shared_expert_size = moe.expert_size * c.positiveInt({"n_shared_experts"}, v3 ? 1 : 2);
  moe.grouped_routing = true;
  moe.sigmoid_scores = v3;
  moe.normalize_top_k = v3 && c.boolean({"norm_topk_prob"}, true);  // V2's router never renormalises
  moe.routed_scale = positiveNumber(c, {"routed_scaling_factor"}, v3 ? 2.5 : 1.0);
  // V3 always routes by groups (transformers reads no topk_method for it: the Hub's "noaux_tc").
  const auto method = v3 ? std::string("group_limited_greedy") : c.string({"topk_method"}, "greedy");
  if (method != "greedy" && method != "group_limited_greedy")
    c.fail("topk_method '" + method + "' is not supported for deepseek_v2 (greedy, group_limited_greedy)");
  if (method == "group_limited_greedy") {
    moe.groups = c.positiveInt({"n_group"}, v3 ? 8 : 1);
    moe.top_groups = c.positiveInt({"topk_group"}, v3 ? 4 : 1);
  }
  const int64_t per_group = moe.experts / moe.groups;
  if (moe.experts % moe.groups != 0)
    c.fail("n_group (" + std::to_string(moe.groups) + ") must divide n_routed_experts (" + std::to_string(moe.experts) + ")");
  if (moe.top_groups > moe.groups)
    c.fail("topk_group (" + std::to_string(moe.top_groups) + ") is more than n_group (" + std::to_string(moe.groups) + ")");
  if (v3 && moe.groups > 1 && per_group < 2)
    c.fail("n_group (" + std::to_string(moe.groups) + ") leaves " + std::to_string(per_group) + " of the " +
           std::to_string(moe.experts) + " n_routed_experts a group: a group's score is its best two's");
  if (moe.experts_per_token > moe.top_groups * per_group)
    c.fail("num_experts_per_tok (" + std::to_string(moe.experts_per_token) + ") is more than the " +
           std::to_string(moe.top_groups * per_group) + " experts of the topk_group groups");
  const double dense_blocks = c.number({"first_k_dense_replace"}, v3 ? 3 : 0);
  if (dense_blocks < 0 || dense_blocks != std::floor(dense_blocks)) c.fail("first_k_dense_replace must be a whole number >= 0");
  const auto dense = static_cast<int64_t>(dense_blocks);
  moe.dense_blocks.assign(static_cast<size_t>(m.num_layers), false);
  for (int64_t i = 0; i < std::min(dense, m.num_layers); ++i) moe.dense_blocks[static_cast<size_t>(i)] = true;
}

ModelConfig readDeepseekConfig(const io::JsonConfig& c, bool v3) {
  const auto& j = c.json();
  if (j.contains("quantization_config") && !j["quantization_config"].is_null())
    c.fail("quantization_config is not supported (the Hub's FP8 DeepSeek weights): use a bfloat16 checkpoint");
  auto m = llama_style::parseConfig(c);
  readLatentAttention(c, m, v3);
  readRouting(c, m, v3);
  return m;
}

nlohmann::json deepseekConfigJson(const ModelConfig& m, bool v3) {
  llama_style::LlamaStyle style{v3 ? "deepseek_v3" : "deepseek_v2", v3 ? "DeepseekV3ForCausalLM" : "DeepseekV2ForCausalLM"};
  auto j = llama_style::configJson(m, style);
  const auto& a = m.latent;
  const auto& moe = m.moe;
  j.erase("head_dim");  // transformers derives it (qk_rope_head_dim)
  j.erase("query_pre_attn_scalar");  // the logit scale is mscale_all_dim's
  j.update({{"q_lora_rank", a.q_rank > 0 ? nlohmann::json(a.q_rank) : nlohmann::json(nullptr)},
            {"kv_lora_rank", a.kv_rank},
            {"qk_nope_head_dim", a.nope_dims},
            {"qk_rope_head_dim", a.rope_dims},
            {"v_head_dim", a.value_dims},
            {"n_routed_experts", moe.experts},
            {"num_experts_per_tok", moe.experts_per_token},
            {"moe_intermediate_size", moe.expert_size},
            {"n_shared_experts", moe.shared_expert_size / moe.expert_size},
            {"routed_scaling_factor", moe.routed_scale},
            {"n_group", moe.groups},
            {"topk_group", moe.top_groups}});
  int64_t dense = 0;
  while (dense < m.num_layers && !moe.sparse(dense)) ++dense;
  j["first_k_dense_replace"] = dense;
  if (v3) {
    j["rope_interleave"] = m.rope.interleaved;
    j["norm_topk_prob"] = moe.normalize_top_k;
  } else {
    j["topk_method"] = moe.groups > 1 ? "group_limited_greedy" : "greedy";
  }
  return j;
}

std::vector<TensorSpec> deepseekTensors(const ModelConfig& m) {
  const auto& a = m.latent;
  const int64_t d = m.hidden_size, f = m.intermediate_size, h = m.num_heads;
  TensorSpecs s;
  auto linear = [&](const std::string& name, std::vector<int64_t> shape, bool bias) {
    const int64_t rows = shape[0];
    s.weight(name + ".weight", std::move(shape));
    if (bias) s.bias(name + ".bias", rows);
  };
  s.table("embed_tokens.weight", {m.vocab_size, d});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
    const auto l = deepseekLayer(i);
    s.norm(l + "input_layernorm", d, false);
    if (a.q_rank > 0) {
      linear(l + "self_attn.q_a_proj", {a.q_rank, d}, m.attention_bias);
      s.norm(l + "self_attn.q_a_layernorm", a.q_rank, false);
      linear(l + "self_attn.q_b_proj", {h * m.headDim(), a.q_rank}, false);
    } else {
      linear(l + "self_attn.q_proj", {h * m.headDim(), d}, false);
    }
    linear(l + "self_attn.kv_a_proj_with_mqa", {a.kv_rank + a.rope_dims, d}, m.attention_bias);
    s.norm(l + "self_attn.kv_a_layernorm", a.kv_rank, false);
    linear(l + "self_attn.kv_b_proj", {h * (a.nope_dims + a.value_dims), a.kv_rank}, false);
    linear(l + "self_attn.o_proj", {d, h * a.value_dims}, m.attention_bias);
    s.norm(l + "post_attention_layernorm", d, false);
    if (m.moe.sparse(i))
      mixture::addTensors(s, l, m, mixture::deepseekNames());
    else
      s.weight(l + "mlp.gate_proj.weight", {f, d}).weight(l + "mlp.up_proj.weight", {f, d}).weight(l + "mlp.down_proj.weight", {d, f});
  }
  s.outsideBlocks().norm("norm", d, false);
  s.head("lm_head.weight", {m.vocab_size, d}, m.tie_word_embeddings);
  return s.take();
}

class Deepseek final : public Model {
 public:
  Deepseek(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    embed_ = w.get("embed_tokens.weight");
    norm_ = w.get("norm.weight");
    lm_head_ = w.has("lm_head.weight") ? w.get("lm_head.weight") : embed_;
    layers_.init(config.num_layers, [w, config](int64_t i) { return loadLayer(w, config, i); }, w.streamed());
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override {
    const int64_t t = ids.size(1);
    if (!config().latent.float32_rope) {
      setRotaryTables(context, t);
    } else {
      Numerics float32 = numerics();
      float32.dtype = float32.rounding = at::kFloat;
      context.rope = ops::rotaryTables(t, kernelPositions(0, t).shared.rope, float32);
    }
    return at::embedding(embed_, ids);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto held = layers_.at(i);
    const auto& l = *held;
    const auto a = ops::rmsNorm(x, l.input_norm, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto residual = num.round(x + attention(l, i, a, context));
    context.mlpInput(i, residual);
    const auto m = ops::rmsNorm(residual, l.post_attention_norm, c.norm_eps, num);
    const auto out = l.mixture ? mixture::forward(*l.mixture, m, c, num) : mixture::gatedMlp(l.mlp, m, c.activation, num);
    return num.round(residual + out);
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    const auto f = ops::rmsNorm(x, norm_, config().norm_eps, numerics());
    if (r.want_final_norm) out.final_norm = f;
    if (r.want_logits) out.logits = ops::linear(f, lm_head_, {}, numerics());
    return out;
  }

  // The rope part turns by frequencies of its own width, not of the whole head's.
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override {
    auto p = Model::kernelPositions(block, seq_len);
    const auto& c = config();
    p.shared.rope.inverse_frequencies = ropeInverseFrequencies(c.rope, c.latent.rope_dims, c.max_positions, seq_len);
    return p;
  }

  // Each head's maps with its coordinates reordered [rope | nope] (q . k is the same sum), so
  // that RoPE turns the first rope_dims as in every other family; the latents' RMSNorm
  // weights folded into the maps, the latents themselves given for their norms' scales.
  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto& c = config();
    const auto& a = c.latent;
    const auto held = layers_.peek(index);
    const auto& l = *held;
    const int64_t h = c.num_heads, n = a.nope_dims, r = a.rope_dims, d = c.hidden_size;
    auto f32 = [](const at::Tensor& t) { return t.to(at::kCPU, at::kFloat); };
    auto biasOr0 = [&](const at::Tensor& b, int64_t rows) { return b.defined() ? f32(b) : at::zeros({rows}); };
    auto ropeFirst = [&](const at::Tensor& t) { return at::cat({t.narrow(1, n, r), t.narrow(1, 0, n)}, 1).contiguous(); };
    QueryKeyMaps maps;
    if (a.q_rank > 0) {
      const auto q_a = f32(l.q_a), q_a_bias = biasOr0(l.q_a_bias, a.q_rank);
      const auto q_b = f32(l.q_b).view({h, n + r, a.q_rank}) * f32(l.q_a_norm).view({1, 1, -1});
      maps.wq = ropeFirst(at::matmul(q_b, q_a));
      maps.bq = ropeFirst(at::matmul(q_b, q_a_bias));
      maps.q_latent = q_a, maps.q_latent_bias = q_a_bias;
    } else {
      maps.wq = ropeFirst(f32(l.q).view({h, n + r, d}));
      maps.bq = at::zeros({h, n + r});
    }
    const auto kv_a = f32(l.kv_a), kv_a_bias = biasOr0(l.kv_a_bias, a.kv_rank + r);
    const auto latent = kv_a.narrow(0, 0, a.kv_rank), latent_bias = kv_a_bias.narrow(0, 0, a.kv_rank);
    const auto k_b = f32(l.kv_b).view({h, n + a.value_dims, a.kv_rank}).narrow(1, 0, n) * f32(l.kv_a_norm).view({1, 1, -1});
    maps.wk = at::cat({kv_a.narrow(0, a.kv_rank, r).expand({h, r, d}), at::matmul(k_b, latent)}, 1).contiguous();
    maps.bk = at::cat({kv_a_bias.narrow(0, a.kv_rank, r).expand({h, r}), at::matmul(k_b, latent_bias)}, 1).contiguous();
    maps.k_latent = latent.contiguous(), maps.k_latent_bias = latent_bias.contiguous();
    maps.k_unscaled = r;
    maps.norm_eps = kLatentNormEps;
    return maps;
  }

  bool hasLmHead() const override { return true; }
  void readBlockAhead(int64_t index) const override { layers_.readAhead(index); }
  void releaseBlock(int64_t index) const override { layers_.release(index); }

 private:
  struct Layer {
    at::Tensor input_norm, post_attention_norm;
    at::Tensor q, q_a, q_a_bias, q_a_norm, q_b;  // q without a latent; q_a, q_a_norm and q_b with one
    at::Tensor kv_a, kv_a_bias, kv_a_norm, kv_b, o, o_bias;
    mixture::Expert mlp;                      // a dense block's
    std::optional<mixture::Mixture> mixture;  // a sparse block's
  };

  static Layer loadLayer(const Weights& w, const ModelConfig& c, int64_t i) {
    const auto l = deepseekLayer(i);
    auto g = [&](const std::string& name, bool present = true) { return present ? w.get(l + name) : at::Tensor(); };
    const bool latent_q = c.latent.q_rank > 0;
    Layer layer;
    layer.input_norm = g("input_layernorm.weight");
    layer.post_attention_norm = g("post_attention_layernorm.weight");
    layer.q = g("self_attn.q_proj.weight", !latent_q);
    layer.q_a = g("self_attn.q_a_proj.weight", latent_q);
    layer.q_a_bias = g("self_attn.q_a_proj.bias", latent_q && c.attention_bias);
    layer.q_a_norm = g("self_attn.q_a_layernorm.weight", latent_q);
    layer.q_b = g("self_attn.q_b_proj.weight", latent_q);
    layer.kv_a = g("self_attn.kv_a_proj_with_mqa.weight");
    layer.kv_a_bias = g("self_attn.kv_a_proj_with_mqa.bias", c.attention_bias);
    layer.kv_a_norm = g("self_attn.kv_a_layernorm.weight");
    layer.kv_b = g("self_attn.kv_b_proj.weight");
    layer.o = g("self_attn.o_proj.weight");
    layer.o_bias = g("self_attn.o_proj.bias", c.attention_bias);
    if (c.moe.sparse(i))
      layer.mixture = mixture::load(w, l, c, mixture::deepseekNames());
    else
      layer.mlp = {g("mlp.gate_proj.weight"), g("mlp.up_proj.weight"), g("mlp.down_proj.weight")};
    return layer;
  }

  // Queries and keys [B, H, T, nope + rope], the keys' rope part shared by every head, and
  // values [B, H, T, value_dims].
  at::Tensor attention(const Layer& l, int64_t block, const at::Tensor& a, const BlockContext& context) const {
    const auto& c = config();
    const auto& num = numerics();
    const auto& lat = c.latent;
    const int64_t h = c.num_heads, n = lat.nope_dims, r = lat.rope_dims;
    const auto q = ops::splitHeads(lat.q_rank > 0 ? ops::linear(ops::rmsNorm(ops::linear(a, l.q_a, l.q_a_bias, num), l.q_a_norm,
                                                                               kLatentNormEps, num),
                                                                  l.q_b, {}, num)
                                                   : ops::linear(a, l.q, {}, num),
                                    h);
    const auto compressed = ops::linear(a, l.kv_a, l.kv_a_bias, num);
    const auto latent = ops::rmsNorm(compressed.narrow(-1, 0, lat.kv_rank), l.kv_a_norm, kLatentNormEps, num);
    const auto kv = ops::splitHeads(ops::linear(latent, l.kv_b, {}, num), h);  // [B, H, T, nope + value]
    const auto& tables = rotaryTablesFor(block, context);
    auto turn = [&](const at::Tensor& t) {
      // V2 turns in float32 and rounds once; V3 in the activations' dtype, op by op.
      return lat.float32_rope ? num.round(ops::applyRotary(t.to(at::kFloat), tables).to(t.scalar_type()))
                              : num.round(ops::applyRotary(t, tables));
    };
    const auto q_rope = turn(q.narrow(-1, n, r));
    const auto k_rope = turn(compressed.narrow(-1, lat.kv_rank, r).unsqueeze(1));  // [B, 1, T, rope]
    const auto query = at::cat({q.narrow(-1, 0, n), q_rope}, -1);
    const auto key = at::cat({kv.narrow(-1, 0, n), k_rope.expand({-1, h, -1, -1})}, -1);
    const auto value = kv.narrow(-1, n, lat.value_dims).contiguous();
    const auto out = ops::attention(query, key, value, attentionShape(block, context), num);
    return ops::linear(ops::mergeHeads(out), l.o, l.o_bias, num);
  }

  at::Tensor embed_, norm_, lm_head_;
  StreamedBlocks<Layer> layers_;  // last: a read-ahead reads the members above
};

// A random checkpoint's shape (posgeom random-model, tests): V3's layout at the shape's sizes,
// the query through a latent, a quarter of each head turning.
ModelConfig deepseekShape(const ModelShape& shape, bool v3) {
  ShapeDefaults defaults{"silu", false, PositionScheme::kRope, mixture::randomShape(false, true)};
  auto m = configForShape(shape, defaults);
  if (m.num_kv_heads != m.num_heads) throw InputError("random-model", "latent attention has as many key-value heads as heads");
  const int64_t head = m.hidden_size / m.num_heads;
  auto& a = m.latent;
  a.rope_dims = std::max<int64_t>(2, head / 4 / 2 * 2);
  a.nope_dims = head;
  a.value_dims = head;
  a.kv_rank = std::max<int64_t>(8, m.hidden_size / 2);
  a.q_rank = v3 ? std::max<int64_t>(8, m.hidden_size / 2) : 0;
  a.float32_rope = !v3;
  m.head_dim = a.nope_dims + a.rope_dims;
  m.rope.interleaved = true;
  m.norm_eps = 1e-6;
  m.moe.grouped_routing = true;
  m.moe.sigmoid_scores = v3;
  m.moe.normalize_top_k = v3;
  m.moe.shared_expert_size = m.moe.expert_size;
  m.moe.dense_blocks.assign(static_cast<size_t>(m.num_layers), false);
  m.moe.dense_blocks[0] = true;  // first_k_dense_replace 1
  return m;
}

Architecture deepseekArchitecture(bool v3) {
  auto entry = defineArchitecture<Deepseek>(
      {v3 ? "deepseek_v3" : "deepseek_v2", v3 ? "DeepSeek-V3" : "DeepSeek-V2", {"model."}},
      [v3](const io::JsonConfig& c) { return readDeepseekConfig(c, v3); },
      [v3](const ModelConfig& m) { return deepseekConfigJson(m, v3); }, deepseekTensors,
      {"silu", false, PositionScheme::kRope});
  entry.config_for_shape = [v3](const ModelShape& shape) { return deepseekShape(shape, v3); };
  entry.unused_by_design = {"rotary_emb.inv_freq"};
  // V3's multi-token-prediction block, stored after the 61 it runs (transformers leaves it out too).
  if (v3) entry.unused_by_design.push_back("layers.61.");
  return entry;
}

}  // namespace

Architecture deepseekV2Architecture() { return deepseekArchitecture(false); }
Architecture deepseekV3Architecture() { return deepseekArchitecture(true); }

}  // namespace posgeom::model
