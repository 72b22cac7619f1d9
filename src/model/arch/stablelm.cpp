// StableLM (3B-4E1T, StableLM-2, Zephyr): the Llama decoder (llama_style.h) with LayerNorms
// (weight and bias, layer_norm_eps) for every norm, RoPE on the first partial_rotary_factor
// of each head (0.25 unless given), and biases on q, k and v with use_qkv_bias. The per-head
// q/k LayerNorms (qk_layernorm) and the parallel residual (use_parallel_residual) of
// StableLM-2-12B are refused by name.
#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {

Architecture stablelmArchitecture() {
  llama_style::LlamaStyle style{"stablelm", "StableLmForCausalLM"};
  style.layer_norms = true;
  style.partial_rotary = true;
  return llama_style::defineFamily(
      {"stablelm", "StableLM", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        if (c.boolean({"qk_layernorm"}, false)) c.fail("qk_layernorm = true is not supported for stablelm");
        if (c.boolean({"use_parallel_residual"}, false)) c.fail("use_parallel_residual = true is not supported for stablelm");
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
                  {"partial_rotary_factor", m.rope.partial_rotary_factor}});
      });
}

}  // namespace posgeom::model
