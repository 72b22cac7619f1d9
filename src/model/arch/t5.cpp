// T5 and mT5: the encoder (T5EncoderModel, or the encoder of a full T5 checkpoint read from
// its encoder. tensors; the decoder and LM head are left out by design). Pre-norm blocks with
// T5's RMSNorm (no mean, no bias), bias-free maps, heads d_kv wide (not d_model / heads),
// logits not scaled by 1/sqrt(d_kv), and each head's learned bias for the bucket of n - i
// (positions::t5BiasTable) from block 0's table, which every block adds. The MLP is
// act(wi x) then wo, or with feed_forward_proj "gated-<act>" act(wi_0 x) * wi_1 x then wo
// ("gated-gelu" is the tanh GELU, as transformers reads it). Bidirectional; no learned
// position limit; a final RMSNorm and no LM head (T5's head is the decoder's).
#include "architectures.h"
#include "head_maps.h"
#include "mixture.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"
#include "posgeom/model/load/weights.h"

namespace posgeom::model {
namespace {

std::string t5Block(int64_t i) { return "encoder.block." + std::to_string(i) + ".layer."; }
const char* const kEmbedding = "shared.weight";
const char* const kBiasTable = "encoder.block.0.layer.0.SelfAttention.relative_attention_bias.weight";

// feed_forward_proj: "<act>" or "gated-<act>"; transformers reads "gated-gelu" as gelu_new.
void readFeedForward(const io::JsonConfig& c, ModelConfig& m, const char* fallback) {
  const auto proj = c.string({"feed_forward_proj"}, fallback);
  const auto dash = proj.find('-');
  m.gated_mlp = dash != std::string::npos;
  if (m.gated_mlp && (proj.substr(0, dash) != "gated" || proj.find('-', dash + 1) != std::string::npos))
    c.fail("feed_forward_proj '" + proj + "' is not '<activation>' or 'gated-<activation>'");
  m.activation = proj == "gated-gelu" ? "gelu_new" : proj.substr(m.gated_mlp ? dash + 1 : 0);
  if (!ops::isKnownActivation(m.activation)) c.fail("unsupported activation '" + m.activation + "' in feed_forward_proj");
}

// T5's buckets: half a side bidirectionally, half of those exact; the logarithmic rest needs
// max_distance beyond the exact ones (transformers divides by log(max_distance / max_exact)).
void readRelativeBias(const io::JsonConfig& c, ModelConfig& m) {
  m.relative_buckets = c.positiveInt({"relative_attention_num_buckets"}, 32);
  m.relative_max_distance = c.positiveInt({"relative_attention_max_distance"}, 128);
  if (m.relative_buckets < 4)
    c.fail("relative_attention_num_buckets must be at least 4 (two sides, each of exact and logarithmic buckets)");
  if (m.relative_max_distance <= m.relative_buckets / 4)
    c.fail("relative_attention_max_distance must exceed the " + std::to_string(m.relative_buckets / 4) +
           " distances the buckets hold exactly (relative_attention_num_buckets / 4)");
}

ModelConfig readT5Config(const io::JsonConfig& c, const char* feed_forward_default) {
  if (c.boolean({"is_decoder"}, false)) c.fail("is_decoder = true is not supported (posgeom reads T5's encoder)");
  auto m = readSizes(c, {"d_model"}, {"num_layers"}, {"num_heads"});
  m.head_dim = c.requirePositiveInt({"d_kv"});
  m.intermediate_size = c.requirePositiveInt({"d_ff"});
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-6);
  readFeedForward(c, m, feed_forward_default);
  readRelativeBias(c, m);
  m.max_positions = 0;
  m.bidirectional = true;
  m.attention_scale = 1.0;  // T5 folds the scale into its initialisation
  m.tie_word_embeddings = false;  // the encoder has no LM head to tie
  m.positions = PositionScheme::kRelativeBias;
  return m;
}

nlohmann::json t5ConfigJson(const ModelConfig& m, const char* architecture, const char* model_type) {
  auto j = sizesJson(m, architecture, model_type, "d_model", "num_layers", "num_heads");
  j.update({{"d_kv", m.headDim()},
            {"d_ff", m.intermediate_size},
            {"layer_norm_epsilon", m.norm_eps},
            {"feed_forward_proj", m.gated_mlp ? (m.activation == "gelu_new" ? "gated-gelu" : "gated-" + m.activation) : m.activation},
            {"relative_attention_num_buckets", m.relative_buckets},
            {"relative_attention_max_distance", m.relative_max_distance},
            {"is_decoder", false}});
  return j;
}

std::vector<TensorSpec> t5Tensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, inner = m.num_heads * m.headDim(), f = m.intermediate_size;
  TensorSpecs s;
  s.table(kEmbedding, {m.vocab_size, d}).table(kBiasTable, {m.relative_buckets, m.num_heads});
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
    const auto l = t5Block(i);
    for (const char* proj : {"q", "k", "v"}) s.weight(l + "0.SelfAttention." + proj + ".weight", {inner, d});
    s.weight(l + "0.SelfAttention.o.weight", {d, inner}).norm(l + "0.layer_norm", d, false);
    if (m.gated_mlp)
      s.weight(l + "1.DenseReluDense.wi_0.weight", {f, d}).weight(l + "1.DenseReluDense.wi_1.weight", {f, d});
    else
      s.weight(l + "1.DenseReluDense.wi.weight", {f, d});
    s.weight(l + "1.DenseReluDense.wo.weight", {d, f}).norm(l + "1.layer_norm", d, false);
  }
  s.outsideBlocks().norm("encoder.final_layer_norm", d, false);
  return s.take();
}

// transformers clamps a float16 block's residual stream after its attention and after its
// MLP, to float16's largest value less 1000 where any value overflowed (finite values are
// otherwise within the largest, which leaves them as they are).
at::Tensor clampOverflow(const at::Tensor& x, const Numerics& num) {
  if (num.rounding != at::kHalf && num.dtype != at::kHalf) return x;
  if (!at::isinf(x).any().item<bool>()) return x;
  const double limit = 65504.0 - 1000.0;  // float16 holds it as 64512
  return num.round(at::clamp(x, -limit, limit));
}

class T5Model final : public Model {
 public:
  T5Model(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    embed_ = w.get(kEmbedding);
    final_norm_ = w.get("encoder.final_layer_norm.weight");
    // Each head's column of block 0's table, as the model holds it (its dtype's values).
    const auto table = w.get(kBiasTable).to(at::kDouble).cpu().contiguous();
    for (int64_t h = 0; h < config.num_heads; ++h) {
      const auto column = table.select(1, h).contiguous();
      std::vector<double> values(column.data_ptr<double>(), column.data_ptr<double>() + column.numel());
      bias_terms_.push_back(positions::relativeBiasTerm(
          positions::t5BiasTable(std::move(values), config.relative_max_distance, config.bidirectional)));
    }
    const bool gated = config.gated_mlp;
    layers_.init(
        config.num_layers,
        [w, gated](int64_t i) {
          const auto l = t5Block(i);
          auto g = [&](const std::string& name) { return w.get(l + name); };
          Layer layer{g("0.layer_norm.weight"), g("0.SelfAttention.q.weight"), g("0.SelfAttention.k.weight"),
                      g("0.SelfAttention.v.weight"), g("0.SelfAttention.o.weight"), g("1.layer_norm.weight"), {}, {}};
          layer.mlp.down = g("1.DenseReluDense.wo.weight");
          if (gated) {
            layer.mlp.gate = g("1.DenseReluDense.wi_0.weight");
            layer.mlp.up = g("1.DenseReluDense.wi_1.weight");
          } else {
            layer.wi = g("1.DenseReluDense.wi.weight");
          }
          return layer;
        },
        w.streamed());
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& /*context*/) const override { return at::embedding(embed_, ids); }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto held = layers_.at(i);
    const auto& l = *held;
    const auto a = ops::rmsNorm(x, l.attention_norm, c.norm_eps, num);
    context.attentionInput(i, a);
    const auto q = ops::splitHeads(ops::linear(a, l.q, {}, num), c.num_heads);
    const auto k = ops::splitHeads(ops::linear(a, l.k, {}, num), c.num_heads);
    const auto v = ops::splitHeads(ops::linear(a, l.v, {}, num), c.num_heads);
    const auto ctx = ops::mergeHeads(ops::attention(q, k, v, attentionShape(i, context), num));
    const auto attended = clampOverflow(num.round(x + ops::linear(ctx, l.o, {}, num)), num);
    const auto m = ops::rmsNorm(attended, l.mlp_norm, c.norm_eps, num);
    const auto out = c.gated_mlp ? mixture::gatedMlp(l.mlp, m, c.activation, num)
                                 : ops::linear(ops::activation(c.activation, ops::linear(m, l.wi, {}, num), num), l.mlp.down, {}, num);
    return clampOverflow(num.round(attended + out), num);
  }

  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override {
    ForwardOutputs out;
    if (r.want_final_norm) out.final_norm = ops::rmsNorm(x, final_norm_, config().norm_eps, numerics());
    return out;
  }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto held = layers_.peek(index);
    return arch::perHeadMaps(held->q, {}, held->k, {}, config().num_heads, config().headDim());
  }

  // The config's mask and scale, and in every block each head's bias from block 0's table.
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override {
    auto p = Model::kernelPositions(block, seq_len);
    p.per_head = bias_terms_;
    return p;
  }

  bool hasLmHead() const override { return false; }
  void readBlockAhead(int64_t index) const override { layers_.readAhead(index); }
  void releaseBlock(int64_t index) const override { layers_.release(index); }

 private:
  struct Layer {
    at::Tensor attention_norm, q, k, v, o, mlp_norm;
    mixture::Expert mlp;  // gated: wi_0, wi_1, wo; else only wo (down)
    at::Tensor wi;        // the ungated MLP's input map
  };
  at::Tensor embed_, final_norm_;
  std::vector<positions::AdditiveTerm> bias_terms_;
  StreamedBlocks<Layer> layers_;  // last: a read-ahead reads the members above
};

// One entry per model_type: T5's and mT5's configs differ only in their defaults.
Architecture defineT5(const char* model_type, const char* family, const char* architecture, const char* feed_forward_default) {
  const ShapeDefaults defaults{feed_forward_default == std::string("gated-gelu") ? "gelu_new" : "relu", false,
                               PositionScheme::kRelativeBias};
  auto entry = defineArchitecture<T5Model>(
      {model_type, family, {}}, [feed_forward_default](const io::JsonConfig& c) { return readT5Config(c, feed_forward_default); },
      [architecture, model_type](const ModelConfig& m) { return t5ConfigJson(m, architecture, model_type); }, t5Tensors, defaults);
  const bool gated = defaults.activation == "gelu_new";
  entry.config_for_shape = [defaults, gated](const ModelShape& shape) {
    auto m = configForShape(shape, defaults);
    m.head_dim = m.hidden_size / m.num_heads;
    m.gated_mlp = gated;
    m.norm_eps = 1e-6;
    m.max_positions = 0;
    m.bidirectional = true;
    m.attention_scale = 1.0;
    m.relative_buckets = 32;
    m.relative_max_distance = 128;
    return m;
  };
  // A full T5's decoder and LM head, and the encoder's copy of the shared embedding
  // (transformers ties it to shared.weight).
  entry.unused_by_design = {"decoder.", "lm_head.weight", "encoder.embed_tokens.weight"};
  entry.layers_key = "num_layers";
  return entry;
}

}  // namespace

Architecture t5Architecture() { return defineT5("t5", "T5", "T5EncoderModel", "relu"); }
Architecture mt5Architecture() { return defineT5("mt5", "mT5", "MT5EncoderModel", "gated-gelu"); }

}  // namespace posgeom::model
