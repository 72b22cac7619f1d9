// MPT (MPT-7B, MPT-30B): ALiBi with MPT's own slopes and no position table, one fused
// bias-free Wqkv map (q | k | v) clamped to attn_config.clip_qkv when set, LayerNorms with a
// weight and no bias, a bias-free GELU MLP four times as wide, a tied head. Read as
// transformers reads it: the options of MosaicML's own code that transformers does not run
// (grouped or multi-query attention, q/k LayerNorms, learned positions instead of ALiBi,
// another alibi_bias_max, biases, another MLP width, a logit scale) are refused by name.
#include <cmath>

#include "gpt_style.h"

namespace posgeom::model {
namespace {

// transformers' maximum slope exponent, whatever attn_config.alibi_bias_max says (see below).
constexpr double kAlibiBiasMax = 8.0;

// Slopes as MPT defines them: for the next power of two p >= heads, 2^(-8k / p) for
// k = 1..p; where p > heads, the odd-numbered ones then the even-numbered, the first `heads`.
std::vector<double> mptAlibiSlopes(int64_t heads) {
  const auto p = static_cast<int64_t>(std::pow(2.0, std::ceil(std::log2(static_cast<double>(heads)))));
  std::vector<double> all;
  for (int64_t k = 1; k <= p; ++k) all.push_back(std::pow(2.0, -static_cast<double>(k) * (kAlibiBiasMax / static_cast<double>(p))));
  if (p == heads) return all;
  std::vector<double> slopes;
  for (int64_t start : {1, 0})
    for (int64_t k = start; k < p; k += 2) slopes.push_back(all[static_cast<size_t>(k)]);
  slopes.resize(static_cast<size_t>(heads));
  return slopes;
}

ModelConfig readMptConfig(const io::JsonConfig& c) {
  auto m = readSizes(c, {"d_model", "hidden_size"}, {"n_layers", "num_hidden_layers"}, {"n_heads", "num_attention_heads"});
  const auto& j = c.json();
  if (c.number({"expansion_ratio"}, 4) != 4) c.fail("expansion_ratio other than 4 is not supported for mpt (transformers' MPT MLP is 4 x d_model)");
  if (!c.boolean({"no_bias"}, true)) c.fail("no_bias = false is not supported for mpt (transformers' MPT has no biases)");
  if (j.contains("logit_scale") && !j["logit_scale"].is_null()) c.fail("logit_scale is not supported for mpt");
  const bool has_attn = j.contains("attn_config") && !j["attn_config"].is_null();
  if (has_attn && !j["attn_config"].is_object()) c.fail("attn_config must be an object (or absent)");
  const nlohmann::json attn = has_attn ? j["attn_config"] : nlohmann::json::object();
  auto attn_value = [&](const char* key) { return attn.contains(key) ? attn[key] : nlohmann::json(); };
  const auto type = attn_value("attn_type");
  if (!type.is_null() && type != "multihead_attention")
    c.fail("attn_config.attn_type '" + (type.is_string() ? type.get<std::string>() : type.dump()) +
           "' is not supported for mpt (multihead_attention)");
  if (attn_value("qk_ln") == true) c.fail("attn_config.qk_ln = true is not supported for mpt");
  if (attn_value("alibi") == false) c.fail("attn_config.alibi = false is not supported for mpt (transformers' MPT is ALiBi)");
  const auto clip = attn_value("clip_qkv");
  if (!clip.is_null()) m.qkv_clip = positiveValue(c, clip, "attn_config.clip_qkv", "a positive number or null");
  const auto scale = attn_value("softmax_scale");
  if (!scale.is_null()) m.attention_scale = positiveValue(c, scale, "attn_config.softmax_scale", "a positive number or null");
  // transformers builds MPT's slopes with a maximum of 8 whatever the config says; MosaicML's
  // code reads it. Only where the two agree is there an oracle.
  const auto bias_max = attn_value("alibi_bias_max");
  if (!bias_max.is_null() && bias_max != 8) c.fail("attn_config.alibi_bias_max other than 8 is not supported for mpt (transformers' MPT uses 8)");
  m.alibi_slopes = mptAlibiSlopes(m.num_heads);
  m.intermediate_size = 4 * m.hidden_size;
  m.max_positions = 0;
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = "gelu";  // exact, as transformers' MptMLP
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  m.positions = PositionScheme::kAlibi;
  return m;
}

nlohmann::json mptConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "MptForCausalLM", "mpt", "d_model", "n_layers", "n_heads");
  nlohmann::json attn = {{"attn_type", "multihead_attention"}, {"alibi", true}, {"qk_ln", false}, {"alibi_bias_max", kAlibiBiasMax}};
  if (m.qkv_clip > 0) attn["clip_qkv"] = m.qkv_clip;
  if (m.attention_scale > 0) attn["softmax_scale"] = m.attention_scale;
  j.update({{"expansion_ratio", 4}, {"no_bias", true}, {"layer_norm_epsilon", m.norm_eps}, {"attn_config", attn},
            {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture mptArchitecture() {
  using gpt_style::Bias;
  auto l = gpt_style::GptLayout()
               .blocks("blocks.")
               .embeddings("wte")
               .norms("norm_1", "norm_2", "norm_f")
               .attention(gpt_style::Qkv::kFusedColumns, {"attn.Wqkv"}, "attn.out_proj", Bias::kNone, Bias::kNone)
               .mlp("ffn.up_proj", "ffn.down_proj", Bias::kNone);
  l.norm_bias = false;
  auto entry = gpt_style::defineFamily({"mpt", "MPT", {"transformer."}}, readMptConfig, mptConfigJson, l,
                                       {"gelu", true, PositionScheme::kAlibi});
  entry.layers_key = "n_layers";
  // A model from sizes alone (random-model, bench) has MPT's slopes too.
  entry.config_for_shape = [from_sizes = entry.config_for_shape](const ModelShape& shape) {
    auto m = from_sizes(shape);
    m.alibi_slopes = mptAlibiSlopes(m.num_heads);
    return m;
  };
  return entry;
}

}  // namespace posgeom::model
