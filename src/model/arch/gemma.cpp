// Gemma (1): the Llama-style decoder (llama_style.h) with RMSNorm scales 1 + w, embeddings
// times sqrt(d), GeGLU (hidden_act "gelu" read as the tanh GELU, as transformers does) and
// a tied LM head; head_dim 256 unless given.
#include "llama_style.h"

namespace posgeom::model {

Architecture gemmaArchitecture() {
  llama_style::LlamaStyle style{"gemma", "GemmaForCausalLM"};
  style.gemma_norms = true;
  return llama_style::defineFamily(
      {"gemma", "Gemma", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) { llama_style::gemmaConfig(c, m, "hidden_act"); },
      {"gelu_pytorch_tanh", true, PositionScheme::kRope});
}

}  // namespace posgeom::model
