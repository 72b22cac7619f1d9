// Cohere (Command-R, Aya): the Llama decoder (llama_style.h) with LayerNorms that have a
// weight and no bias (layer_norm_eps), attention and the gated MLP in parallel off one input
// norm, RoPE turning interleaved pairs (2j, 2j + 1), a tied head and the logits times
// logit_scale (0.0625 unless given); RoPE base 500,000 unless given. With use_qk_norm
// (Command-R+) each head's q and k go through a bias-free LayerNorm with weights of their own
// before RoPE. --neurons is not available (its MLP reads the block's input).
#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {

Architecture cohereArchitecture() {
  llama_style::LlamaStyle style{"cohere", "CohereForCausalLM"};
  style.weight_only_layer_norms = true;
  return llama_style::defineFamily(
      {"cohere", "Cohere", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.qk_layer_norm = c.boolean({"use_qk_norm"}, false);
        m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-5);
        m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
        ropeThetaOr(c, m, 5e5);  // transformers' default
        m.rope.interleaved = true;
        m.parallel_residual = true;
        // Logits times the scale; as a divisor, exact for the powers of two Cohere ships.
        m.logit_divisor = 1.0 / positiveNumber(c, {"logit_scale"}, 0.0625);
      },
      {"silu", true, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        j.erase("rms_norm_eps");
        j.update({{"layer_norm_eps", m.norm_eps}, {"logit_scale", 1.0 / m.logit_divisor}, {"use_qk_norm", m.qk_layer_norm}});
      });
}

}  // namespace posgeom::model
