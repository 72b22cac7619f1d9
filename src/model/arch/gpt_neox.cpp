// GPT-NeoX / Pythia: RoPE on the first rotary_pct of each head (rotate_half), pre-LN blocks
// with LayerNorm biases, attention and MLP in parallel off the same input (unless
// use_parallel_residual is false), and query/key/value fused per head as [H, 3, dh].
#include "gpt_style.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

ModelConfig readGptNeoxConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  m.intermediate_size = c.positiveInt({"intermediate_size"}, 4 * m.hidden_size);
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-5);
  m.activation = readActivation(c, "hidden_act", "gelu");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  m.attention_bias = c.boolean({"attention_bias"}, true);
  m.parallel_residual = c.boolean({"use_parallel_residual"}, true);
  // Pythia's configs (before transformers 5) name RoPE rotary_pct and rotary_emb_base.
  m.rope = readRopeConfig(c);
  if (!c.json().contains("rope_parameters")) {
    m.rope.partial_rotary_factor = c.number({"rotary_pct"}, 0.25);
    m.rope.theta = positiveNumber(c, {"rotary_emb_base", "rope_theta"}, 10000.0);
  }
  if (!(m.rope.partial_rotary_factor > 0 && m.rope.partial_rotary_factor <= 1)) c.fail("rotary_pct must lie in (0, 1]");
  if (m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  requireEvenRotaryDims(c, m, "rotary_pct");
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json gptNeoxConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "GPTNeoXForCausalLM", "gpt_neox");
  j.update({{"intermediate_size", m.intermediate_size}, {"hidden_act", m.activation},
          {"layer_norm_eps", m.norm_eps},            {"max_position_embeddings", m.max_positions},
          {"rotary_pct", m.rope.partial_rotary_factor}, {"rotary_emb_base", m.rope.theta},
          {"use_parallel_residual", m.parallel_residual}, {"attention_bias", m.attention_bias},
          {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture gptNeoXArchitecture() {
  using gpt_style::Bias;
  auto l = gpt_style::GptLayout()
               .blocks("layers.")
               .embeddings("embed_in")
               .norms("input_layernorm", "post_attention_layernorm", "final_layer_norm")
               .attention(gpt_style::Qkv::kFusedPerHead, {"attention.query_key_value"}, "attention.dense",
                          Bias::kWithAttentionBias, Bias::kWithAttentionBias)
               .mlp("mlp.dense_h_to_4h", "mlp.dense_4h_to_h");
  // Pythia's checkpoints call the LM head embed_out; transformers 5 reads it as lm_head.
  // Either may be stored (neither: no logits); tied, neither is used.
  l.lm_heads = {"embed_out", "lm_head"};
  auto entry = gpt_style::defineFamily({"gpt_neox", "GPT-NeoX", {"gpt_neox."}}, readGptNeoxConfig, gptNeoxConfigJson, l,
                                       {"gelu", false, PositionScheme::kRope});
  // Pythia's checkpoints hold the causal mask's and RoPE's buffers.
  entry.unused_by_design = {"attention.bias", "attention.masked_bias", "rotary_emb.inv_freq"};
  return entry;
}

}  // namespace posgeom::model
