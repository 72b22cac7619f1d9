// Qwen2 / Qwen2.5: the Llama-style decoder (llama_style.h) with biases on q, k and v, and
// with use_sliding_window, sliding windows in the layers from max_window_layers on (or as
// layer_types says).
#include "llama_style.h"

namespace posgeom::model {

Architecture qwen2Architecture() {
  return llama_style::defineFamily({"qwen2", "Qwen2", {"model."}}, {"qwen2", "Qwen2ForCausalLM", /*qkv_bias=*/true},
                                   llama_style::qwenWindows);
}

}  // namespace posgeom::model
