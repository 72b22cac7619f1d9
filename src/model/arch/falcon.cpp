// Falcon (Falcon-7B, 40B, 180B, Falcon2-11B): the GPT-style decoder (gpt_style.h) with RoPE,
// LayerNorms with biases, an MLP of ffn_hidden_size (4 x hidden_size unless given), maps with
// biases only where `bias` is true, and one fused query_key_value map in one of three layouts:
// new_decoder_architecture's [key/value head][its query heads | k | v] over num_kv_heads
// groups; the older multi_query's one group (every query head, then one k and one v); the
// older multi-head one's per head [q | k | v]. Attention and MLP run in parallel off one
// input (parallel_attn), each through its own norm in the new architecture
// (num_ln_in_parallel_attn 2: ln_attn, ln_mlp) or both through input_layernorm; without
// parallel_attn (the older architecture only) in series, post_attention_layernorm before the
// MLP. ALiBi (Falcon-RW) is refused by name: transformers adds bfloat16(slope) x key position
// rounded to bfloat16, a term of the key's position and not of the distance, and (5.23) its
// eager attention adds that term twice (in the logits and again in the mask it folded it
// into) where its SDPA attention adds it once: there is no one oracle to be exact against.
#include "gpt_style.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

ModelConfig readFalconConfig(const io::JsonConfig& c) {
  auto m = readSizes(c, {"hidden_size", "n_embed"}, {"num_hidden_layers", "n_layer"}, {"num_attention_heads", "n_head"});
  if (c.boolean({"alibi"}, false))
    c.fail("alibi = true (Falcon-RW) is not supported: transformers adds bfloat16(slope) x key position, a term of "
           "the key's position rather than of its distance from the query, and its eager and SDPA attention add it "
           "a different number of times");
  const bool new_architecture = c.boolean({"new_decoder_architecture"}, false);
  const bool multi_query = c.boolean({"multi_query"}, true);
  m.parallel_residual = c.boolean({"parallel_attn"}, true);
  const int64_t kv_heads = c.positiveInt({"num_kv_heads"}, m.num_heads);
  if (new_architecture) {
    if (!m.parallel_residual) c.fail("new_decoder_architecture without parallel_attn is not supported (transformers' Falcon cannot run it)");
    if (m.num_heads % kv_heads != 0) c.fail("num_attention_heads is not a multiple of num_kv_heads");
    m.num_kv_heads = kv_heads;
  } else if (multi_query) {
    m.num_kv_heads = 1;
  } else if (kv_heads != m.num_heads) {
    c.fail("num_kv_heads other than num_attention_heads needs new_decoder_architecture (the older multi-head layout has one "
           "key and value a head)");
  }
  // How many norms the parallel blocks read: the new architecture's two (its default) or one.
  const int64_t norms = c.positiveInt({"num_ln_in_parallel_attn"}, new_architecture ? 2 : 1);
  if (norms > 2 || (norms == 2 && (!new_architecture || !m.parallel_residual)))
    c.fail("num_ln_in_parallel_attn " + std::to_string(norms) + " is not supported (2 is for new_decoder_architecture's "
           "parallel blocks; transformers' older blocks read input_layernorm)");
  m.parallel_norms = norms == 2;
  m.intermediate_size = c.positiveInt({"ffn_hidden_size"}, 4 * m.hidden_size);
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = readActivation(c, "activation", "gelu");
  m.attention_bias = c.boolean({"bias"}, false);
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  m.rope = readRopeConfig(c);
  m.positions = PositionScheme::kRope;
  return m;
}

// What a random Falcon writes: the new architecture wherever the key/value heads are grouped.
nlohmann::json falconConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "FalconForCausalLM", "falcon");
  const bool multi_query = m.num_kv_heads == 1 && m.num_heads > 1 && !m.parallel_norms;
  const bool new_architecture = !multi_query && (m.num_kv_heads != m.num_heads || m.parallel_norms);
  j.update({{"new_decoder_architecture", new_architecture},
            {"multi_query", multi_query},
            {"num_kv_heads", m.num_kv_heads},
            {"parallel_attn", m.parallel_residual},
            {"num_ln_in_parallel_attn", m.parallel_norms ? 2 : 1},
            {"alibi", false},
            {"bias", m.attention_bias},
            {"ffn_hidden_size", m.intermediate_size},
            {"max_position_embeddings", m.max_positions},
            {"layer_norm_epsilon", m.norm_eps},
            {"activation", m.activation},
            {"rope_theta", m.rope.theta},
            {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

gpt_style::GptLayout falconLayout(const ModelConfig& m) {
  using gpt_style::Bias;
  auto l = gpt_style::GptLayout()
               .blocks("h.")
               .embeddings("word_embeddings")
               .attention(gpt_style::Qkv::kFusedGroups, {"self_attention.query_key_value"}, "self_attention.dense",
                          Bias::kWithAttentionBias, Bias::kWithAttentionBias)
               .mlp("mlp.dense_h_to_4h", "mlp.dense_4h_to_h", Bias::kWithAttentionBias);
  if (m.parallel_norms)
    l.norms("ln_attn", "ln_mlp", "ln_f");
  else
    l.norms("input_layernorm", m.parallel_residual ? "" : "post_attention_layernorm", "ln_f");
  return l;
}

}  // namespace

Architecture falconArchitecture() {
  const ShapeDefaults defaults{"gelu", true, PositionScheme::kRope};
  auto entry = gpt_style::defineFamily({"falcon", "Falcon", {"transformer."}}, readFalconConfig, falconConfigJson, falconLayout,
                                       defaults);
  // Parallel blocks, as Falcon's; grouped key/value heads in the new architecture's layout.
  entry.config_for_shape = [defaults](const ModelShape& shape) {
    auto m = configForShape(shape, defaults);
    m.parallel_residual = true;
    m.parallel_norms = m.num_kv_heads != m.num_heads && m.num_kv_heads != 1;
    return m;
  };
  return entry;
}

}  // namespace posgeom::model
