// Llama, Llama-2, Llama-3 / 3.1 / 3.2: the Llama-style decoder (llama_style.h), RoPE plain or
// scaled (llama3, linear, dynamic), biases only with attention_bias.
#include "llama_style.h"

namespace posgeom::model {

Architecture llamaArchitecture() {
  return llama_style::defineFamily({"llama", "Llama", {"model."}}, {"llama", "LlamaForCausalLM"},
                                   [](const io::JsonConfig&, ModelConfig&) {});
}

}  // namespace posgeom::model
