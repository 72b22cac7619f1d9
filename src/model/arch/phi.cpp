// Phi-1 / 1.5 / 2: RoPE on the first partial_rotary_factor of each head (rotate_half; 0.5
// unless given), one LayerNorm feeding attention and a dense MLP (fc1, fc2) in parallel,
// biases on every map, a final LayerNorm and an LM head with a bias. Grouped key/value heads
// and qk_layernorm (neither in a released Phi-1/1.5/2) are refused by name.
#include "gpt_style.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

ModelConfig readPhiConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  const auto& j = c.json();
  if (j.contains("num_key_value_heads") && !j["num_key_value_heads"].is_null() &&
      c.positiveInt({"num_key_value_heads"}, m.num_heads) != m.num_heads)
    c.fail("num_key_value_heads other than num_attention_heads (grouped heads) is not supported for phi");
  if (c.boolean({"qk_layernorm"}, false)) c.fail("qk_layernorm = true is not supported for phi");
  m.intermediate_size = c.requirePositiveInt({"intermediate_size"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-5);
  m.activation = readActivation(c, "hidden_act", "gelu_new");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  if (m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  m.rope = readRopeConfig(c);
  partialRotaryFactorOr(c, m, 0.5);
  m.parallel_residual = true;
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json phiConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "PhiForCausalLM", "phi");
  j.update({{"intermediate_size", m.intermediate_size}, {"hidden_act", m.activation},
            {"layer_norm_eps", m.norm_eps}, {"max_position_embeddings", m.max_positions},
            {"rope_parameters", {{"rope_type", "default"}, {"rope_theta", m.rope.theta},
                                 {"partial_rotary_factor", m.rope.partial_rotary_factor}}},
            {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture phiArchitecture() {
  auto l = gpt_style::GptLayout()
               .blocks("layers.")
               .embeddings("embed_tokens")
               .norms("input_layernorm", /*mlp: reads the attention's normed input*/ "", "final_layernorm")
               .attention(gpt_style::Qkv::kSeparate, {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"},
                          "self_attn.dense")
               .mlp("mlp.fc1", "mlp.fc2");
  l.lm_head_bias = true;
  return gpt_style::defineFamily({"phi", "Phi", {"model."}}, readPhiConfig, phiConfigJson, l,
                                 {"gelu_new", false, PositionScheme::kRope});
}

}  // namespace posgeom::model
