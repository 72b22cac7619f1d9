// GPT-2 (gpt2 .. gpt2-xl): learned absolute positions, pre-LN blocks, Conv1D weights
// stored [in, out], LM head tied to the token embedding unless lm_head.weight is given.
// Models trained by `posgeom train` may instead have no positional encoding or ALiBi
// ("posgeom_position_encoding": "none" or "alibi" in config.json; no wpe then).
#include "gpt_style.h"

namespace posgeom::model {
namespace {

ModelConfig readGpt2Config(const io::JsonConfig& c) {
  auto m = readSizes(c, {"n_embd", "hidden_size"}, {"n_layer", "num_hidden_layers"}, {"n_head", "num_attention_heads"});
  m.max_positions = c.requirePositiveInt({"n_positions", "max_position_embeddings"});
  m.intermediate_size = c.positiveInt({"n_inner", "intermediate_size"}, 4 * m.hidden_size);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = readActivation(c, "activation_function", "gelu_new");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  const auto encoding = c.string({"posgeom_position_encoding"}, "learned");
  if (encoding == "learned") m.positions = PositionScheme::kLearned;
  else if (encoding == "alibi") m.positions = PositionScheme::kAlibi;
  else if (encoding == "none") m.positions = PositionScheme::kNone;
  else c.fail("posgeom_position_encoding must be learned, alibi or none, not '" + encoding + "'");
  return m;
}

nlohmann::json gpt2ConfigJson(const ModelConfig& m) {
  auto j = sizesJson(m, "GPT2LMHeadModel", "gpt2", "n_embd", "n_layer", "n_head");
  j.update({{"n_positions", m.max_positions},   {"n_ctx", m.max_positions},
            {"n_inner", m.intermediate_size},   {"activation_function", m.activation},
            {"layer_norm_epsilon", m.norm_eps}, {"tie_word_embeddings", m.tie_word_embeddings}});
  if (m.positions == PositionScheme::kAlibi) j["posgeom_position_encoding"] = "alibi";
  if (m.positions == PositionScheme::kNone) j["posgeom_position_encoding"] = "none";
  return j;
}

}  // namespace

Architecture gpt2Architecture() {
  using gpt_style::Qkv;
  auto l = gpt_style::GptLayout()
               .blocks("h.")
               .embeddings("wte", "wpe")
               .norms("ln_1", "ln_2", "ln_f")
               .attention(Qkv::kFusedColumns, {"attn.c_attn"}, "attn.c_proj")
               .mlp("mlp.c_fc", "mlp.c_proj");
  l.conv1d = true;
  l.neuron_circuit = true;
  auto entry = gpt_style::defineFamily({"gpt2", "GPT-2", {"transformer."}}, readGpt2Config, gpt2ConfigJson, l,
                                       {"gelu_new", true, PositionScheme::kLearned}, /*supports_dropout=*/true);
  entry.layers_key = "n_layer";
  entry.unused_by_design = {"attn.bias", "attn.masked_bias"};  // the causal mask's buffers
  return entry;
}

}  // namespace posgeom::model
