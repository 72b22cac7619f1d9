// Qwen3: Qwen2's decoder (qwen2.cpp) with each head's query and key RMSNormed before RoPE,
// an explicit head_dim, and biases only with attention_bias.
#include "llama_style.h"

namespace posgeom::model {

Architecture qwen3Architecture() {
  llama_style::LlamaStyle style{"qwen3", "Qwen3ForCausalLM"};
  style.qk_norm = true;
  return llama_style::defineFamily({"qwen3", "Qwen3", {"model."}}, style, llama_style::qwenWindows);
}

}  // namespace posgeom::model
