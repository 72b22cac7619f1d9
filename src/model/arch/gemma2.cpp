// Gemma-2: Gemma's decoder (gemma.cpp) with norms after attention and around the MLP,
// sliding windows in alternate layers (the even ones, unless layer_types says), logits
// scaled by query_pre_attn_scalar^-1/2 and soft-capped in attention and the LM head.
#include <cmath>

#include "llama_style.h"

namespace posgeom::model {

Architecture gemma2Architecture() {
  llama_style::LlamaStyle style{"gemma2", "Gemma2ForCausalLM"};
  style.gemma_norms = true;
  style.sandwich_norms = true;
  return llama_style::defineFamily(
      {"gemma2", "Gemma-2", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        llama_style::gemmaConfig(c, m, "hidden_activation");
        m.attention_windows = llama_style::layerWindows(c, m.num_layers, [](int64_t i) { return i % 2 == 0; }, 4096);
        // Logits scale by its inverse root: 0 divides by zero, a negative one is complex.
        m.attention_scale = 1.0 / std::sqrt(positiveNumber(c, {"query_pre_attn_scalar"}, 256.0));
        m.attention_logit_cap = llama_style::softCap(c, "attn_logit_softcapping", 50.0);
        m.final_logit_cap = llama_style::softCap(c, "final_logit_softcapping", 30.0);
      },
      {"gelu_pytorch_tanh", true, PositionScheme::kRope});
}

}  // namespace posgeom::model
