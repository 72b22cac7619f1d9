// Mistral: the Llama-style decoder (llama_style.h) where every layer attends within
// sliding_window keys when it is set (transformers' Mistral ignores layer_types).
#include "llama_style.h"

namespace posgeom::model {

Architecture mistralArchitecture() {
  return llama_style::defineFamily({"mistral", "Mistral", {"model."}}, {"mistral", "MistralForCausalLM"},
                                   llama_style::windowsInEveryLayer);
}

}  // namespace posgeom::model
