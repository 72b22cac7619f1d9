// Starcoder2: the Llama decoder (llama_style.h) with LayerNorms (weight and bias,
// norm_epsilon) for every norm, a dense MLP (c_fc, the tanh GELU, c_proj), biases on every
// map with use_bias (the default), sliding_window in every layer when set, and a tied head
// unless tie_word_embeddings says otherwise.
#include "llama_style.h"

namespace posgeom::model {

Architecture starcoder2Architecture() {
  llama_style::LlamaStyle style{"starcoder2", "Starcoder2ForCausalLM"};
  style.layer_norms = true;
  style.dense_mlp = true;
  return llama_style::defineFamily(
      {"starcoder2", "Starcoder2", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.norm_eps = normEpsilon(c, {"norm_epsilon"}, 1e-5);
        m.attention_bias = m.mlp_bias = c.boolean({"use_bias"}, true);
        m.activation = readActivation(c, "hidden_act", "gelu_pytorch_tanh");
        m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
        llama_style::windowsInEveryLayer(c, m);
      },
      {"gelu_pytorch_tanh", true, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        j.erase("rms_norm_eps");
        j.erase("attention_bias");
        j.erase("layer_types");  // windows in every layer: sliding_window alone says so
        j.update({{"norm_epsilon", m.norm_eps}, {"use_bias", m.attention_bias}});
      });
}

}  // namespace posgeom::model
