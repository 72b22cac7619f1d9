// BLOOM: no position embeddings, ALiBi biases on the attention logits, a LayerNorm on
// the word embeddings (hidden.0), and query/key/value fused per head as [H, 3, dh].
#include "gpt_style.h"

namespace posgeom::model {
namespace {

ModelConfig readBloomConfig(const io::JsonConfig& c) {
  auto m = readSizes(c, {"hidden_size", "n_embed"}, {"n_layer", "num_hidden_layers"}, {"n_head", "num_attention_heads"});
  m.intermediate_size = 4 * m.hidden_size;
  m.max_positions = 0;
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = "gelu_new";  // BLOOM's bloom_gelu is the tanh approximation
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  if (c.boolean({"apply_residual_connection_post_layernorm"}, false))
    c.fail("apply_residual_connection_post_layernorm = true is not supported");
  m.positions = PositionScheme::kAlibi;
  return m;
}

nlohmann::json bloomConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "BloomForCausalLM", "bloom", "hidden_size", "n_layer", "n_head");
  j.update({{"layer_norm_epsilon", m.norm_eps}, {"apply_residual_connection_post_layernorm", false},
            {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture bloomArchitecture() {
  auto l = gpt_style::GptLayout()
               .blocks("h.")
               .embeddings("word_embeddings")
               .norms("input_layernorm", "post_attention_layernorm", "ln_f")
               .attention(gpt_style::Qkv::kFusedPerHead, {"self_attention.query_key_value"}, "self_attention.dense")
               .mlp("mlp.dense_h_to_4h", "mlp.dense_4h_to_h");
  l.embedding_norm = "word_embeddings_layernorm";
  auto entry = gpt_style::defineFamily({"bloom", "BLOOM", {"transformer."}}, readBloomConfig, bloomConfigJson, l,
                                       {"gelu_new", true, PositionScheme::kAlibi});
  entry.layers_key = "n_layer";
  return entry;
}

}  // namespace posgeom::model
