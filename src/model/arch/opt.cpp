// OPT: learned positions stored two rows past their index (row t + 2 for position t), LayerNorm
// before each block (or after, with do_layer_norm_before false: OPT-350m), ReLU MLP, and for
// OPT-350m embeddings narrower than the blocks (project_in / project_out).
#include "gpt_style.h"

namespace posgeom::model {
namespace {

ModelConfig readOptConfig(const io::JsonConfig& c) {
  auto m = readSizes(c);
  m.intermediate_size = c.requirePositiveInt({"ffn_dim"});
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = 1e-5;  // nn.LayerNorm's default: OPT's configs have no key for it
  m.activation = readActivation(c, "activation_function", "relu");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  m.attention_bias = c.boolean({"enable_bias"}, true);
  m.post_norm = !c.boolean({"do_layer_norm_before"}, true);
  m.embedding_width = c.positiveInt({"word_embed_proj_dim"}, m.hidden_size);
  if (!c.boolean({"layer_norm_elementwise_affine"}, true)) c.fail("layer_norm_elementwise_affine = false is not supported");
  if (c.boolean({"_remove_final_layer_norm"}, false)) c.fail("_remove_final_layer_norm = true is not supported");
  if (m.hidden_size % m.num_heads != 0) c.fail("hidden_size is not divisible by num_attention_heads");
  m.positions = PositionScheme::kLearned;
  return m;
}

nlohmann::json optConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "OPTForCausalLM", "opt");
  j.update({{"ffn_dim", m.intermediate_size},      {"max_position_embeddings", m.max_positions},
          {"activation_function", m.activation}, {"do_layer_norm_before", !m.post_norm},
          {"word_embed_proj_dim", m.embedding_width > 0 ? m.embedding_width : m.hidden_size},
          {"enable_bias", m.attention_bias},     {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture optArchitecture() {
  using gpt_style::Bias;
  auto l = gpt_style::GptLayout()
               .blocks("decoder.layers.")
               .embeddings("decoder.embed_tokens", "decoder.embed_positions")
               .norms("self_attn_layer_norm", "final_layer_norm", "decoder.final_layer_norm")
               .attention(gpt_style::Qkv::kSeparate, {"self_attn.q_proj", "self_attn.k_proj", "self_attn.v_proj"},
                          "self_attn.out_proj", Bias::kWithAttentionBias, Bias::kWithAttentionBias)
               .mlp("fc1", "fc2", Bias::kWithAttentionBias);
  l.position_offset = 2;  // OPTLearnedPositionalEmbedding's offset
  l.project_in = "decoder.project_in";
  l.project_out = "decoder.project_out";
  l.norms_listed_after = true;  // its modules: the maps, then their norm
  return gpt_style::defineFamily({"opt", "OPT", {"model."}}, readOptConfig, optConfigJson, l,
                                 {"relu", true, PositionScheme::kLearned});
}

}  // namespace posgeom::model
