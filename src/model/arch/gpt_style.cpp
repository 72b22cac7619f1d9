#include "gpt_style.h"

#include "head_maps.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model::gpt_style {
namespace {

std::string blockPrefix(const GptLayout& l, int64_t i) { return l.block_prefix + std::to_string(i) + "."; }
int64_t embeddingWidth(const ModelConfig& m) { return m.embedding_width > 0 ? m.embedding_width : m.hidden_size; }
bool hasBias(Bias b, const ModelConfig& m) { return b == Bias::kAlways || (b == Bias::kWithAttentionBias && m.attention_bias); }

}  // namespace

std::vector<TensorSpec> tensors(const ModelConfig& m, const GptLayout& l) {
  const int64_t d = m.hidden_size, f = m.intermediate_size, e = embeddingWidth(m);
  TensorSpecs s;
  s.table(l.embed + ".weight", {m.vocab_size, e});
  if (m.positions == PositionScheme::kLearned) s.table(l.position_table + ".weight", {m.max_positions + l.position_offset, d});
  if (!l.embedding_norm.empty()) s.norm(l.embedding_norm, d, l.norm_bias);
  if (e != d) s.weight(l.project_in + ".weight", {d, e}).weight(l.project_out + ".weight", {e, d});
  // A map [out, in] (Conv1D: [in, out]) and its bias.
  auto map = [&](const std::string& name, int64_t out, int64_t in, Bias bias) {
    s.weight(name + ".weight", l.conv1d ? std::vector<int64_t>{in, out} : std::vector<int64_t>{out, in});
    if (hasBias(bias, m)) s.bias(name + ".bias", out);
  };
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
    const auto b = blockPrefix(l, i);
    if (!l.norms_listed_after) s.norm(b + l.attn_norm, d, l.norm_bias);
    const int64_t kv = m.num_kv_heads * m.headDim();  // the key (and value) maps' outputs
    if (l.qkv == Qkv::kSeparate) {
      map(b + l.qkv_names[0], d, d, l.qkv_bias);
      for (size_t j = 1; j < 3; ++j) map(b + l.qkv_names[j], kv, d, l.qkv_bias);
    } else {
      map(b + l.qkv_names.front(), d + 2 * kv, d, l.qkv_bias);
    }
    map(b + l.out, d, d, l.out_bias);
    if (l.norms_listed_after) s.norm(b + l.attn_norm, d, l.norm_bias);
    if (!l.mlp_norm.empty() && !l.norms_listed_after) s.norm(b + l.mlp_norm, d, l.norm_bias);
    map(b + l.mlp_in, f, d, l.mlp_bias);
    map(b + l.mlp_out, d, f, l.mlp_bias);
    if (!l.mlp_norm.empty() && l.norms_listed_after) s.norm(b + l.mlp_norm, d, l.norm_bias);
  }
  s.outsideBlocks();
  if (!m.post_norm) s.norm(l.final_norm, d, l.norm_bias);
  const bool optional_heads = l.lm_heads.size() > 1;
  for (const auto& name : l.lm_heads)
    s.head(name + ".weight", {m.vocab_size, e}, m.tie_word_embeddings, optional_heads);
  if (l.lm_head_bias) s.output(l.lm_heads.front() + ".bias", {m.vocab_size});
  return s.take();
}

namespace {

using Norm = arch::LayerNormWeights;

// The LayerNorm under `name`: its weight, and its bias unless the layout's norms have none (MPT).
Norm readNorm(const Weights& w, const std::string& name, const GptLayout& l) {
  return Norm{w.get(name + ".weight"), l.norm_bias ? w.get(name + ".bias") : at::Tensor()};
}

class GptStyleModel final : public Model {
 public:
  GptStyleModel(const ModelConfig& config, const Weights& w, const Numerics& num, GptLayout layout)
      : Model(config, num), layout_(std::move(layout)) {
    const auto& l = layout_;
    auto norm = [&](const std::string& name) { return readNorm(w, name, l); };
    embed_ = w.get(l.embed + ".weight");
    if (config.positions == PositionScheme::kLearned) positions_ = w.get(l.position_table + ".weight");
    if (config.positions == PositionScheme::kAlibi)
      slopes_ = config.alibi_slopes.empty()
                    ? ops::alibiSlopes(config.num_heads)
                    : at::tensor(config.alibi_slopes, at::TensorOptions().dtype(at::kDouble)).to(at::kFloat);
    if (!l.embedding_norm.empty()) embedding_norm_ = norm(l.embedding_norm);
    if (!l.project_in.empty() && w.has(l.project_in + ".weight")) {
      project_in_ = w.get(l.project_in + ".weight");
      project_out_ = w.get(l.project_out + ".weight");
    }
    if (!config.post_norm) final_norm_ = norm(l.final_norm);
    for (const auto& name : l.lm_heads)
      if (!lm_head_.defined() && w.has(name + ".weight")) lm_head_ = w.get(name + ".weight");
    if (!lm_head_.defined() && config.tie_word_embeddings) lm_head_ = embed_;
    const auto head_bias = l.lm_heads.front() + ".bias";
    if (l.lm_head_bias && w.has(head_bias)) lm_head_bias_ = w.get(head_bias);
    blocks_.init(config.num_layers, [this, w](int64_t i) { return loadBlock(w, blockPrefix(layout_, i)); }, w.streamed());
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override {
    const auto& num = numerics();
    const int64_t t = ids.size(1);
    if (config().positions == PositionScheme::kRope) context.rope = rotaryTables(t);
    auto x = at::embedding(embed_, ids);
    if (project_in_.defined()) x = ops::linear(x, project_in_, {}, num);
    if (positions_.defined()) {
      auto rows = at::arange(t, at::TensorOptions().dtype(at::kLong).device(num.device));
      if (layout_.position_offset != 0) rows = rows + layout_.position_offset;
      x = x + at::embedding(positions_, rows);
    }
    // The table's values are already rounded (Weights fit them): only a sum or a map needs it.
    x = embedding_norm_.w.defined() ? layerNorm(x, embedding_norm_) : num.round(x);
    return context.drop(x);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto held = blocks_.at(i);
    const auto& b = *held;
    const auto a = c.post_norm ? x : layerNorm(x, b.ln_1);
    context.attentionInput(i, a);
    const auto attended = attention(b, i, a, context);
    if (c.parallel_residual) {
      // Attention and MLP both read the block's input; GPT-J's MLP shares the attention's norm.
      const auto m = b.ln_2.w.defined() ? layerNorm(x, b.ln_2) : a;
      return num.round(num.round(mlp(b, m) + attended) + x);
    }
    auto h = num.round(x + context.drop(attended));
    if (c.post_norm) h = layerNorm(h, b.ln_1);
    if (layout_.neuron_circuit) context.mlpInput(i, h);
    const auto out = num.round(h + context.drop(mlp(b, c.post_norm ? h : layerNorm(h, b.ln_2))));
    return c.post_norm ? layerNorm(out, b.ln_2) : out;
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    // transformers' last_hidden_state: the final norm (pre-LN models), then project_out.
    auto f = final_norm_.w.defined() ? layerNorm(x, final_norm_) : x;
    if (project_out_.defined()) f = ops::linear(f, project_out_, {}, numerics());
    if (r.want_final_norm && hasFinalNorm()) out.final_norm = f;
    if (r.want_logits && lm_head_.defined()) out.logits = ops::linear(f, lm_head_, lm_head_bias_, numerics());
    return out;
  }

  // RoPE is not in these maps (kernelPositions gives the rotation); a key's bias rotates
  // with it and is kept.
  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto held = blocks_.peek(index);
    const auto& b = *held;
    auto maps = arch::perHeadMaps(queryMap(b, 0), queryBias(b, 0), queryMap(b, 1), queryBias(b, 1), config().num_heads,
                                  config().headDim(), config().num_kv_heads);
    maps.clip = config().qkv_clip;
    return maps;
  }

  std::optional<NeuronCircuit> neuronCircuit(int64_t seq_len) const override {
    if (!layout_.neuron_circuit) return std::nullopt;
    const auto& c = config();
    const auto held = blocks_.peek(0);
    const auto& b = *held;
    // A token's attention input at the window's mean position embedding.
    auto e = embed_.to(at::kFloat);
    if (positions_.defined()) e = e + positions_.narrow(0, layout_.position_offset, seq_len).to(at::kFloat).mean(0);
    const auto tokens = at::layer_norm(e, {c.hidden_size}, b.ln_1.w.to(at::kFloat), b.ln_1.b.to(at::kFloat), c.norm_eps);
    return arch::layerNormCircuit(tokens, queryMap(b, 2), b.o_w, b.ln_2, c.norm_eps, b.fc_w, b.fc_b, c.num_heads,
                                  c.headDim());
  }

  void readBlockAhead(int64_t index) const override { blocks_.readAhead(index); }
  void releaseBlock(int64_t index) const override { blocks_.release(index); }
  bool hasFinalNorm() const override { return final_norm_.w.defined() || project_out_.defined(); }
  bool hasLmHead() const override { return lm_head_.defined(); }
  at::Tensor alibiSlopes() const override { return slopes_; }
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override {
    return alibiKernelPositions(slopes_, block, seq_len);
  }

 private:
  // Maps as a linear layer's [out, in]; a fused q | k | v map kept whole (one product),
  // per-head fused maps split into q, k and v once.
  struct Block {
    Norm ln_1, ln_2;
    at::Tensor qkv_w, qkv_b;  // Qkv::kFusedColumns
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, o_w, o_b, fc_w, fc_b, proj_w, proj_b;
  };

  Block loadBlock(const Weights& w, const std::string& prefix) const {
    const auto& c = config();
    const auto& l = layout_;
    auto norm = [&](const std::string& name) { return name.empty() ? Norm{} : readNorm(w, prefix + name, l); };
    // Conv1D stores [in, out]: its transposed view is the [out, in] of a linear layer, which
    // the BLAS reads as it is (a contiguous copy would double the weights' memory).
    auto weight = [&](const std::string& name) {
      const auto t = w.get(prefix + name + ".weight");
      return l.conv1d ? t.t() : t;
    };
    auto bias = [&](const std::string& name, Bias rule) {
      return hasBias(rule, c) ? w.get(prefix + name + ".bias") : at::Tensor();
    };
    Block b;
    b.ln_1 = norm(l.attn_norm);
    b.ln_2 = norm(l.mlp_norm);
    const auto& names = l.qkv_names;
    if (l.qkv == Qkv::kSeparate) {
      b.q_w = weight(names[0]), b.k_w = weight(names[1]), b.v_w = weight(names[2]);
      b.q_b = bias(names[0], l.qkv_bias), b.k_b = bias(names[1], l.qkv_bias), b.v_b = bias(names[2], l.qkv_bias);
    } else if (l.qkv == Qkv::kFusedColumns) {
      b.qkv_w = weight(names[0]), b.qkv_b = bias(names[0], l.qkv_bias);
    } else {
      // Rows of the fused map are [group][its G queries | k | v][dh] (per head: G = 1, one
      // group a head); split them into q, k, v once.
      const int64_t groups = l.qkv == Qkv::kFusedPerHead ? c.num_heads : c.num_kv_heads;
      const int64_t g = c.num_heads / groups, dh = c.headDim(), d = c.hidden_size;
      const auto fused_w = weight(names[0]).view({groups, g + 2, dh, d});
      const auto fused_b = bias(names[0], l.qkv_bias);
      // Rows [first, first + count) of each group, as one map [groups * count * dh, d].
      auto part_w = [&](int64_t first, int64_t count) {
        return fused_w.narrow(1, first, count).reshape({groups * count * dh, d}).contiguous();
      };
      auto part_b = [&](int64_t first, int64_t count) {
        return fused_b.defined() ? fused_b.view({groups, g + 2, dh}).narrow(1, first, count).reshape({groups * count * dh}).contiguous()
                                 : at::Tensor();
      };
      b.q_w = part_w(0, g), b.k_w = part_w(g, 1), b.v_w = part_w(g + 1, 1);
      b.q_b = part_b(0, g), b.k_b = part_b(g, 1), b.v_b = part_b(g + 1, 1);
    }
    b.o_w = weight(l.out), b.o_b = bias(l.out, l.out_bias);
    b.fc_w = weight(l.mlp_in), b.fc_b = bias(l.mlp_in, l.mlp_bias);
    b.proj_w = weight(l.mlp_out), b.proj_b = bias(l.mlp_out, l.mlp_bias);
    return b;
  }

  // Part j (0: query, 1: key, 2: value) of the block's maps, [d, d] and [d].
  at::Tensor queryMap(const Block& b, int64_t j) const {
    const int64_t d = config().hidden_size;
    if (b.qkv_w.defined()) return b.qkv_w.narrow(0, j * d, d);
    return j == 0 ? b.q_w : j == 1 ? b.k_w : b.v_w;
  }
  at::Tensor queryBias(const Block& b, int64_t j) const {
    const int64_t d = config().hidden_size;
    if (b.qkv_w.defined()) return b.qkv_b.defined() ? b.qkv_b.narrow(0, j * d, d) : at::Tensor();
    return j == 0 ? b.q_b : j == 1 ? b.k_b : b.v_b;
  }

  at::Tensor layerNorm(const at::Tensor& t, const Norm& n) const {
    return ops::layerNorm(t, n.w, n.b, config().norm_eps, numerics());
  }

  // The attention's output through its out map, not yet added to the residual stream.
  at::Tensor attention(const Block& b, int64_t i, const at::Tensor& a, const BlockContext& context) const {
    const auto& c = config();
    const auto& num = numerics();
    at::Tensor q, k, v;
    // MPT's clip_qkv clamps q, k and v alike.
    auto clip = [&](const at::Tensor& t) { return c.qkv_clip > 0 ? t.clamp(-c.qkv_clip, c.qkv_clip) : t; };
    if (b.qkv_w.defined()) {
      const auto parts = clip(ops::linear(a, b.qkv_w, b.qkv_b, num)).chunk(3, -1);
      q = parts[0], k = parts[1], v = parts[2];
    } else {
      q = clip(ops::linear(a, b.q_w, b.q_b, num)), k = clip(ops::linear(a, b.k_w, b.k_b, num));
      v = clip(ops::linear(a, b.v_w, b.v_b, num));
    }
    q = ops::splitHeads(q, c.num_heads), k = ops::splitHeads(k, c.num_kv_heads), v = ops::splitHeads(v, c.num_kv_heads);
    if (c.positions == PositionScheme::kRope) {
      q = num.round(ops::applyRotary(q, context.rope));
      k = num.round(ops::applyRotary(k, context.rope));
    }
    const auto heads = ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num));
    return ops::linear(heads, b.o_w, b.o_b, num);
  }

  at::Tensor mlp(const Block& b, const at::Tensor& m) const {
    const auto& num = numerics();
    const auto hidden = ops::activation(config().activation, ops::linear(m, b.fc_w, b.fc_b, num), num);
    return ops::linear(hidden, b.proj_w, b.proj_b, num);
  }

  GptLayout layout_;
  at::Tensor embed_, positions_, slopes_, project_in_, project_out_, lm_head_, lm_head_bias_;
  Norm embedding_norm_, final_norm_;
  StreamedBlocks<Block> blocks_;  // last: a read-ahead reads the members above
};

}  // namespace

Architecture defineFamily(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                          decltype(Architecture::to_config_json) to_config_json, GptLayout layout,
                          ShapeDefaults defaults, bool supports_dropout) {
  auto list = [layout](const ModelConfig& m) { return tensors(m, layout); };
  auto build = [layout](const ModelConfig& c, const Weights& w, const Numerics& n) -> std::unique_ptr<Model> {
    return std::make_unique<GptStyleModel>(c, w, n, layout);
  };
  return defineArchitecture(std::move(names), std::move(parse_config), std::move(to_config_json), std::move(list),
                            std::move(build), std::move(defaults), supports_dropout);
}

Architecture defineFamily(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                          decltype(Architecture::to_config_json) to_config_json, LayoutOf layout_of, ShapeDefaults defaults) {
  auto list = [layout_of](const ModelConfig& m) { return tensors(m, layout_of(m)); };
  auto build = [layout_of](const ModelConfig& c, const Weights& w, const Numerics& n) -> std::unique_ptr<Model> {
    return std::make_unique<GptStyleModel>(c, w, n, layout_of(c));
  };
  return defineArchitecture(std::move(names), std::move(parse_config), std::move(to_config_json), std::move(list),
                            std::move(build), std::move(defaults));
}

}  // namespace posgeom::model::gpt_style
