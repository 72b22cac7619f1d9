// Llama / Llama-2 (and Llama-3 checkpoints without rope scaling): the Llama-style decoder
// (llama_style.h) with no biases.
#include "llama_style.h"

namespace posgeom::model {

Architecture llamaArchitecture() {
  return llama_style::defineFamily({"llama", "Llama", {"model."}}, {"llama", "LlamaForCausalLM", /*qkv_bias=*/false},
                                   [](const io::JsonConfig& c) {
                                     if (c.boolean({"attention_bias"}, false)) c.fail("attention_bias = true is not supported");
                                   });
}

}  // namespace posgeom::model
