// OLMo-3: OLMo-2's decoder (olmo2.cpp: norms after attention and after the MLP, q and k
// RMSNormed over all heads together, scales in float32) with sliding windows where
// layer_types says (three blocks in four by default, sliding_window 4096) and RoPE per layer
// type: rope_parameters.full_attention in the global blocks (YaRN in the long-context
// models), rope_parameters.sliding_attention in the windowed ones (or one RoPE for all where
// rope_parameters is not given per type); rms_norm_eps 1e-5 unless given.
#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {

Architecture olmo3Architecture() {
  llama_style::LlamaStyle style{"olmo3", "Olmo3ForCausalLM"};
  style.post_norms = true;
  style.joint_qk_norm = true;
  return llama_style::defineFamily({"olmo3", "OLMo-3", {"model."}}, style, [](const io::JsonConfig& c, ModelConfig& m) {
    m.norm_eps = normEpsilon(c, {"rms_norm_eps"}, 1e-5);
    m.attention_windows = llama_style::layerWindows(c, m.num_layers, [](int64_t i) { return (i + 1) % 4 != 0; }, 4096);
    ropeThetaOr(c, m, 500000.0);  // transformers' default for OLMo-3
    m.local_rope = readLayerTypeRope(c, "sliding_attention");
  });
}

}  // namespace posgeom::model
