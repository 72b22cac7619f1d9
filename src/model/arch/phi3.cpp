// Phi-3 / Phi-3.5 / Phi-4-mini: the Llama-style decoder (llama_style.h) with q, k, v fused in
// qkv_proj and gate and up in gate_up_proj, RoPE on the first partial_rotary_factor of each
// head, and sliding_window (when set) in every layer; the 128k variants' longrope RoPE.
#include "llama_style.h"

namespace posgeom::model {

Architecture phi3Architecture() {
  llama_style::LlamaStyle style{"phi3", "Phi3ForCausalLM"};
  style.fused_projections = true;
  style.partial_rotary = true;
  return llama_style::defineFamily({"phi3", "Phi-3", {"model."}}, style, llama_style::windowsInEveryLayer);
}

}  // namespace posgeom::model
