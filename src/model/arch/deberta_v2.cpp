// DeBERTa-v2 and DeBERTa-v3: a bidirectional post-LN encoder (BERT's blocks: LayerNorm after
// attention and after the MLP) with disentangled attention (ModelConfig::Disentangled): each
// logit q_n . k_i plus the query against the key vector of the relative position n - i
// (c2p) plus the key against its query vector (p2c), over sqrt(head_dim x (1 + the terms
// pos_att_type names)). The 2 span relative embeddings (encoder.rel_embeddings, LayerNormed
// with norm_rel_ebd "layer_norm") go through the block's own query and key maps
// (share_att_key, DeBERTa-v3) or through pos_query_proj / pos_key_proj; distances in log
// buckets (position_buckets, max_relative_positions). hidden.0 is LayerNorm(word embedding,
// plus the learned position where position_biased_input, plus token type 0 where
// type_vocab_size > 0, projected by embed_proj where embedding_size differs). The MLM and
// replaced-token heads are left out (no LM head); DeBERTa-v2-xlarge's convolution
// (conv_kernel_size) is refused by name; --neurons is not available.
#include <cctype>
#include <cmath>
#include <tuple>

#include "architectures.h"
#include "head_maps.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model {
namespace {

std::string debertaLayer(int64_t i) { return "encoder.layer." + std::to_string(i) + "."; }

// pos_att_type: a list (transformers 5) or "p2c|c2p" (the Hub's older configs).
void readTerms(const io::JsonConfig& c, Disentangled& d) {
  const auto& j = c.json();
  std::vector<std::string> terms;
  if (j.contains("pos_att_type") && j["pos_att_type"].is_array()) {
    for (const auto& t : j["pos_att_type"]) {
      if (!t.is_string()) c.fail("pos_att_type must list \"c2p\" and/or \"p2c\"");
      terms.push_back(t.get<std::string>());
    }
  } else if (j.contains("pos_att_type") && j["pos_att_type"].is_string()) {
    std::string s = j["pos_att_type"].get<std::string>();
    for (std::size_t at = 0; at <= s.size();) {
      const auto bar = std::min(s.find('|', at), s.size());
      std::string t = s.substr(at, bar - at);
      t.erase(0, t.find_first_not_of(' '));
      t.erase(t.find_last_not_of(' ') + 1);
      if (!t.empty()) terms.push_back(t);
      at = bar + 1;
    }
  } else if (j.contains("pos_att_type") && !j["pos_att_type"].is_null()) {
    c.fail("pos_att_type must list \"c2p\" and/or \"p2c\"");
  }
  for (auto t : terms) {
    for (auto& ch : t) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    if (t == "c2p")
      d.c2p = true;
    else if (t == "p2c")
      d.p2c = true;
    else
      c.fail("pos_att_type '" + t + "' is not supported (c2p, p2c)");
  }
}

ModelConfig readDebertaConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  const auto& j = c.json();
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 512);
  const double types = c.number({"type_vocab_size"}, 0);
  if (types < 0 || types != std::floor(types)) c.fail("type_vocab_size must be a whole number >= 0");
  m.type_vocab_size = static_cast<int64_t>(types);
  m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-7);
  m.activation = readActivation(c, "hidden_act", "gelu");
  if (c.number({"conv_kernel_size"}, 0) > 0)
    c.fail("conv_kernel_size > 0 (DeBERTa-v2-xlarge's convolution beside block 0) is not supported");
  if (j.contains("attention_head_size") && !j["attention_head_size"].is_null()) m.head_dim = c.requirePositiveInt({"attention_head_size"});
  if (m.head_dim == 0 && m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  auto& d = m.disentangled;
  d.absolute_positions = c.boolean({"position_biased_input"}, true);
  d.embedding_size = c.positiveInt({"embedding_size"}, m.hidden_size);
  if (c.boolean({"relative_attention"}, false)) {
    readTerms(c, d);
    if (!d.c2p && !d.p2c) c.fail("relative_attention is true but pos_att_type names neither c2p nor p2c");
    const double max_relative = c.number({"max_relative_positions"}, -1);
    d.max_relative = max_relative < 1 ? m.max_positions : static_cast<int64_t>(max_relative);
    const double buckets = c.number({"position_buckets"}, -1);
    d.buckets = buckets > 0 ? static_cast<int64_t>(buckets) : 0;
    d.span = d.buckets > 0 ? d.buckets : d.max_relative;
    d.shared_maps = c.boolean({"share_att_key"}, false);
    auto norms = c.string({"norm_rel_ebd"}, "none");
    for (auto& ch : norms) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    d.normed_embeddings = norms.find("layer_norm") != std::string::npos;
  }
  m.tie_word_embeddings = true;
  m.bidirectional = true;
  m.positions = d.span > 0 ? PositionScheme::kDisentangled : d.absolute_positions ? PositionScheme::kLearned : PositionScheme::kNone;
  return m;
}

nlohmann::json debertaConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "DebertaV2Model", "deberta-v2");
  const auto& d = m.disentangled;
  nlohmann::json terms = nlohmann::json::array();
  if (d.p2c) terms.push_back("p2c");
  if (d.c2p) terms.push_back("c2p");
  j.update({{"intermediate_size", m.intermediate_size},
            {"hidden_act", m.activation},
            {"max_position_embeddings", m.max_positions},
            {"type_vocab_size", m.type_vocab_size},
            {"layer_norm_eps", m.norm_eps},
            {"relative_attention", d.span > 0},
            {"position_biased_input", d.absolute_positions},
            {"pos_att_type", terms},
            {"max_relative_positions", d.max_relative > 0 ? d.max_relative : -1},
            {"position_buckets", d.buckets > 0 ? d.buckets : -1},
            {"share_att_key", d.shared_maps},
            {"norm_rel_ebd", d.normed_embeddings ? "layer_norm" : "none"},
            {"embedding_size", d.embedding_size > 0 ? d.embedding_size : m.hidden_size}});
  return j;
}

std::vector<TensorSpec> debertaTensors(const ModelConfig& m) {
  const int64_t d = m.hidden_size, f = m.intermediate_size, e = m.disentangled.embedding_size > 0 ? m.disentangled.embedding_size : d;
  const int64_t inner = m.num_heads * m.headDim();
  const auto& rel = m.disentangled;
  TensorSpecs s;
  auto linear = [&](const std::string& name, int64_t rows, int64_t cols) { s.weight(name + ".weight", {rows, cols}).bias(name + ".bias", rows); };
  s.table("embeddings.word_embeddings.weight", {m.vocab_size, e});
  if (rel.absolute_positions) s.table("embeddings.position_embeddings.weight", {m.max_positions, e});
  if (m.type_vocab_size > 0) s.table("embeddings.token_type_embeddings.weight", {m.type_vocab_size, e});
  if (e != d) s.weight("embeddings.embed_proj.weight", {d, e});
  s.norm("embeddings.LayerNorm", d);
  // Every block reads the relative embeddings: a table stored once, under the encoder.
  if (rel.span > 0) s.table("encoder.rel_embeddings.weight", {2 * rel.span, d});
  if (rel.span > 0 && rel.normed_embeddings) s.norm("encoder.LayerNorm", d);
  for (int64_t i = 0; i < m.num_layers; ++i) {
    s.inBlock(i);
    const auto l = debertaLayer(i);
    for (const char* proj : {"query_proj", "key_proj", "value_proj"}) linear(l + "attention.self." + proj, inner, d);
    if (rel.span > 0 && !rel.shared_maps && rel.c2p) linear(l + "attention.self.pos_key_proj", inner, d);
    if (rel.span > 0 && !rel.shared_maps && rel.p2c) linear(l + "attention.self.pos_query_proj", inner, d);
    linear(l + "attention.output.dense", d, inner);
    s.norm(l + "attention.output.LayerNorm", d);
    linear(l + "intermediate.dense", f, d);
    linear(l + "output.dense", d, f);
    s.norm(l + "output.LayerNorm", d);
  }
  return s.take();
}

class DebertaV2 final : public Model {
 public:
  DebertaV2(const ModelConfig& config, const Weights& w, const Numerics& num) : Model(config, num) {
    const auto& rel = config.disentangled;
    auto optional = [&w](const std::string& name, bool present) { return present ? w.get(name) : at::Tensor(); };
    word_ = w.get("embeddings.word_embeddings.weight");
    position_ = optional("embeddings.position_embeddings.weight", rel.absolute_positions);
    if (config.type_vocab_size > 0) type0_ = w.get("embeddings.token_type_embeddings.weight")[0];
    embed_proj_ = optional("embeddings.embed_proj.weight", rel.embedding_size > 0 && rel.embedding_size != config.hidden_size);
    embed_norm_ = {w.get("embeddings.LayerNorm.weight"), w.get("embeddings.LayerNorm.bias")};
    if (rel.span > 0) {
      // The relative embeddings as every block reads them: LayerNormed once (norm_rel_ebd).
      relative_ = w.get("encoder.rel_embeddings.weight").narrow(0, 0, 2 * rel.span);
      if (rel.normed_embeddings)
        relative_ = ops::layerNorm(relative_, w.get("encoder.LayerNorm.weight"), w.get("encoder.LayerNorm.bias"), config.norm_eps, num);
    }
    // Each block's relative vectors made once, when its weights are read, not in every call.
    layers_.init(
        config.num_layers,
        [this, w](int64_t i) {
          auto layer = loadLayer(w, this->config(), i);
          std::tie(layer.relative_keys, layer.relative_queries) = relativeVectors(layer);
          layer.pos_q_w = layer.pos_q_b = layer.pos_k_w = layer.pos_k_b = at::Tensor();  // only the vectors needed them
          return layer;
        },
        w.streamed());
  }

  at::Tensor embed(const at::Tensor& ids, BlockContext& /*context*/) const override {
    const auto& c = config();
    const auto& num = numerics();
    const int64_t t = ids.size(1);  // within max_positions where they are learned: Model::idsOnDevice
    auto e = at::embedding(word_, ids);
    if (position_.defined()) e = num.round(e + position_.narrow(0, 0, t));
    if (type0_.defined()) e = num.round(e + type0_);
    if (embed_proj_.defined()) e = ops::linear(e, embed_proj_, {}, num);
    return ops::layerNorm(e, embed_norm_.w, embed_norm_.b, c.norm_eps, num);
  }

  at::Tensor block(int64_t i, const at::Tensor& x, const BlockContext& context) const override {
    const auto& c = config();
    const auto& num = numerics();
    const auto held = layers_.at(i);
    const auto& l = *held;
    context.attentionInput(i, x);  // post-LN: the block's input is already normed
    const auto residual = num.round(ops::linear(attention(l, x), l.o_w, l.o_b, num) + x);
    context.mlpInput(i, residual);  // the stream before the norm that is the MLP's input norm (as BERT's)
    const auto attended = ops::layerNorm(residual, l.attention_norm.w, l.attention_norm.b, c.norm_eps, num);
    const auto inner = ops::activation(c.activation, ops::linear(attended, l.i_w, l.i_b, num), num);
    return ops::layerNorm(num.round(ops::linear(inner, l.out_w, l.out_b, num) + attended), l.output_norm.w, l.output_norm.b,
                          c.norm_eps, num);
  }

  ForwardOutputs finish(const at::Tensor& /*x*/, const ForwardRequest& /*r*/) const override { return {}; }

  QueryKeyMaps queryKeyMaps(int64_t index) const override {
    const auto held = layers_.peek(index);
    return arch::perHeadMaps(held->q_w, held->q_b, held->k_w, held->k_b, config().num_heads, config().headDim());
  }

  // Each head's c2p key vectors and p2c query vectors of the relative positions, as the
  // block's attention makes them, and its logit scale.
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override {
    auto p = Model::kernelPositions(block, seq_len);
    const auto& c = config();
    p.shared.scale = 1.0 / scaleOf();
    if (c.disentangled.span == 0) return p;
    const auto held = layers_.peek(block);
    const auto& keys = held->relative_keys;  // [H, 2 span, dh]
    const auto& queries = held->relative_queries;
    auto host = [](const at::Tensor& t, int64_t h) {
      const auto row = t[h].to(at::kCPU, at::kDouble).contiguous();
      return std::vector<double>(row.data_ptr<double>(), row.data_ptr<double>() + row.numel());
    };
    for (int64_t h = 0; h < c.num_heads; ++h) {
      positions::RelativeVectors v;
      v.rows = rows();
      v.dims = c.headDim();
      if (keys.defined()) v.keys = host(keys, h);
      if (queries.defined()) v.queries = host(queries, h);
      p.relative_vectors.push_back(std::move(v));
    }
    return p;
  }

  // No additive term: the bias reads none of the blocks' relative vectors.
  positions::BlockPositions additivePositions(int64_t seq_len) const override { return Model::kernelPositions(0, seq_len); }

  bool hasFinalNorm() const override { return false; }
  bool hasLmHead() const override { return false; }
  void readBlockAhead(int64_t index) const override { layers_.readAhead(index); }
  void releaseBlock(int64_t index) const override { layers_.release(index); }

 private:
  using Norm = arch::LayerNormWeights;
  struct Layer {
    at::Tensor q_w, q_b, k_w, k_b, v_w, v_b, pos_q_w, pos_q_b, pos_k_w, pos_k_b, o_w, o_b;
    Norm attention_norm;
    at::Tensor i_w, i_b, out_w, out_b;
    Norm output_norm;
    at::Tensor relative_keys, relative_queries;  // relativeVectors', [H, 2 span, dh]
  };

  static Layer loadLayer(const Weights& w, const ModelConfig& c, int64_t i) {
    const auto l = debertaLayer(i);
    const auto& rel = c.disentangled;
    auto g = [&](const std::string& name, bool present = true) { return present ? w.get(l + name) : at::Tensor(); };
    const bool own_keys = rel.span > 0 && !rel.shared_maps && rel.c2p, own_queries = rel.span > 0 && !rel.shared_maps && rel.p2c;
    Layer layer{g("attention.self.query_proj.weight"), g("attention.self.query_proj.bias"),
                 g("attention.self.key_proj.weight"), g("attention.self.key_proj.bias"),
                 g("attention.self.value_proj.weight"), g("attention.self.value_proj.bias"),
                 g("attention.self.pos_query_proj.weight", own_queries), g("attention.self.pos_query_proj.bias", own_queries),
                 g("attention.self.pos_key_proj.weight", own_keys), g("attention.self.pos_key_proj.bias", own_keys),
                 g("attention.output.dense.weight"), g("attention.output.dense.bias"),
                 {g("attention.output.LayerNorm.weight"), g("attention.output.LayerNorm.bias")},
                 g("intermediate.dense.weight"), g("intermediate.dense.bias"),
                 g("output.dense.weight"), g("output.dense.bias"),
                 {g("output.LayerNorm.weight"), g("output.LayerNorm.bias")}, {}, {}};
    return layer;
  }

  positions::DisentangledRows rows() const {
    const auto& rel = config().disentangled;
    return {rel.span, rel.buckets, rel.max_relative};
  }

  // sqrt(head_dim x (1 + the terms)), as transformers' scaled_size_sqrt in float32.
  double scaleOf() const {
    const auto& rel = config().disentangled;
    const int terms = 1 + (rel.span > 0 && rel.c2p ? 1 : 0) + (rel.span > 0 && rel.p2c ? 1 : 0);
    return static_cast<double>(std::sqrt(static_cast<float>(config().headDim()) * static_cast<float>(terms)));
  }

  // c2p's key vectors and p2c's query vectors of the relative embeddings [H, 2 span, dh]
  // (undefined where the term is absent).
  std::pair<at::Tensor, at::Tensor> relativeVectors(const Layer& l) const {
    const auto& c = config();
    const auto& rel = c.disentangled;
    const auto& num = numerics();
    const auto heads = [&](const at::Tensor& t) { return ops::splitHeads(t.unsqueeze(0), c.num_heads)[0]; };
    at::Tensor keys, queries;
    if (rel.c2p) keys = heads(ops::linear(relative_, rel.shared_maps ? l.k_w : l.pos_k_w, rel.shared_maps ? l.k_b : l.pos_k_b, num));
    if (rel.p2c) queries = heads(ops::linear(relative_, rel.shared_maps ? l.q_w : l.pos_q_w, rel.shared_maps ? l.q_b : l.pos_q_b, num));
    return {keys, queries};
  }

  // For queries n and keys i of a window of T: c2p's rows [T, T] (rows(n, i)) and p2c's.
  std::pair<at::Tensor, at::Tensor> rowIndices(int64_t t) const {
    const auto tables = rows().tables(t);
    auto indices = [&](const std::vector<int32_t>& rows_of) {
      return at::tensor(rows_of, at::TensorOptions().dtype(at::kInt)).to(at::kLong).view({t, t}).to(numerics().device);
    };
    return {indices(tables.c2p), indices(tables.p2c)};
  }

  // transformers' DisentangledSelfAttention, op by op in the activations' dtype: q . (k / s),
  // plus (c2p / s + p2c / s), softmax, times v.
  at::Tensor attention(const Layer& l, const at::Tensor& x) const {
    const auto& c = config();
    const auto& num = numerics();
    const int64_t b = x.size(0), t = x.size(1), h = c.num_heads;
    const auto q = ops::splitHeads(ops::linear(x, l.q_w, l.q_b, num), h);
    const auto k = ops::splitHeads(ops::linear(x, l.k_w, l.k_b, num), h);
    const auto v = ops::splitHeads(ops::linear(x, l.v_w, l.v_b, num), h);
    const auto scale = num.fit(at::scalar_tensor(scaleOf()));
    auto scores = num.round(at::matmul(q, num.round(k.transpose(-1, -2) / scale)));
    if (c.disentangled.span > 0) {
      const auto& keys = l.relative_keys;
      const auto& queries = l.relative_queries;
      const auto [c2p_rows, p2c_rows] = rowIndices(t);
      at::Tensor relative;
      if (keys.defined()) {  // c2p: q_n . keys[c2p_rows(n, i)]
        const auto c2p = num.round(at::matmul(q, keys.transpose(-1, -2)));  // [B, H, T, 2 span]
        relative = num.round(c2p.gather(-1, c2p_rows.expand({b, h, t, t})) / scale);
      }
      if (queries.defined()) {  // p2c: k_i . queries[p2c_rows(n, i)], gathered by key then turned
        const auto p2c = num.round(at::matmul(k, queries.transpose(-1, -2)));
        const auto term = num.round(p2c.gather(-1, p2c_rows.t().expand({b, h, t, t})).transpose(-1, -2) / scale);
        relative = relative.defined() ? num.round(relative + term) : term;
      }
      scores = num.round(scores + relative);
    }
    const auto probs = num.round(at::softmax(scores, -1));
    return ops::mergeHeads(num.round(at::matmul(probs, v)));
  }

  at::Tensor word_, position_, type0_, embed_proj_, relative_;
  Norm embed_norm_;
  StreamedBlocks<Layer> layers_;  // last: a read-ahead reads the members above
};

}  // namespace

Architecture debertaV2Architecture() {
  auto entry = defineArchitecture<DebertaV2>({"deberta-v2", "DeBERTa-v2", {"deberta."}}, readDebertaConfig, debertaConfigJson,
                                             debertaTensors, {"gelu", true, PositionScheme::kDisentangled});
  entry.config_for_shape = [](const ModelShape& shape) {
    auto m = configForShape(shape, {"gelu", true, PositionScheme::kDisentangled});
    m.bidirectional = true;
    m.type_vocab_size = 0;
    m.norm_eps = 1e-7;
    auto& d = m.disentangled;  // DeBERTa-v3's: 256 buckets a side out to 512, shared maps, both terms
    d.c2p = d.p2c = true;
    d.shared_maps = true;
    d.normed_embeddings = true;
    d.buckets = std::min<int64_t>(256, std::max<int64_t>(2, m.max_positions / 2));
    d.max_relative = m.max_positions;
    d.span = d.buckets;
    d.absolute_positions = false;
    d.embedding_size = m.hidden_size;
    return m;
  };
  // The masked-LM and replaced-token-detection heads of the Hub's checkpoints: not computed.
  entry.unused_by_design = {"lm_predictions.", "mask_predictions.", "cls.", "embeddings.position_ids"};
  return entry;
}

}  // namespace posgeom::model
