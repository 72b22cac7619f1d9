// Mistral: the Llama-style decoder (llama_style.h) where every layer attends within
// sliding_window keys when it is set (transformers' Mistral ignores layer_types).
#include "llama_style.h"

namespace posgeom::model {

Architecture mistralArchitecture() {
  return llama_style::defineFamily({"mistral", "Mistral", {"model."}}, {"mistral", "MistralForCausalLM"},
                                   [](const io::JsonConfig& c, ModelConfig& m) {
                                     const auto& j = c.json();
                                     if (j.contains("sliding_window") && !j["sliding_window"].is_null())
                                       m.attention_windows.assign(static_cast<size_t>(m.num_layers),
                                                                  c.requirePositiveInt({"sliding_window"}));
                                   });
}

}  // namespace posgeom::model
