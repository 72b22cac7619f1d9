// StableLM (3B-4E1T, StableLM-2, Zephyr): the Llama decoder (llama_style.h) with LayerNorms
// (weight and bias, layer_norm_eps) for every norm, RoPE on the first partial_rotary_factor
// of each head (0.25 unless given), and biases on q, k and v with use_qkv_bias. StableLM-2-12B
// adds each head's q and k through a bias-free LayerNorm of its own before RoPE (qk_layernorm,
// one tensor a head) and attention and MLP in parallel off the input norm
// (use_parallel_residual, no post-attention norm; --neurons is then not available).
#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {

Architecture stablelmArchitecture() {
  llama_style::LlamaStyle style{"stablelm", "StableLmForCausalLM"};
  style.layer_norms = true;
  style.partial_rotary = true;
  style.head_norm_per_tensor = true;
  return llama_style::defineFamily(
      {"stablelm", "StableLM", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.qk_layer_norm = c.boolean({"qk_layernorm"}, false);
        m.parallel_residual = c.boolean({"use_parallel_residual"}, false);
        m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-5);
        m.qkv_bias = c.boolean({"use_qkv_bias"}, false);
        partialRotaryFactorOr(c, m, 0.25);
      },
      {"silu", false, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        j.erase("rms_norm_eps");
        j.erase("attention_bias");
        j.update({{"layer_norm_eps", m.norm_eps},
                  {"use_qkv_bias", m.qkv_bias},
                  {"partial_rotary_factor", m.rope.partial_rotary_factor},
                  {"qk_layernorm", m.qk_layer_norm},
                  {"use_parallel_residual", m.parallel_residual}});
      });
}

}  // namespace posgeom::model
