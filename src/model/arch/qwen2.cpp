// Qwen2 / Qwen2.5: the Llama-style decoder (llama_style.h) with biases on q, k and v.
// Sliding-window layers are refused until the heads analysis limits keys to the window.
#include "llama_style.h"

namespace posgeom::model {

Architecture qwen2Architecture() {
  return llama_style::defineFamily({"qwen2", "Qwen2", {"model."}}, {"qwen2", "Qwen2ForCausalLM", /*qkv_bias=*/true},
                                   [](const io::JsonConfig& c) {
                                     const auto& j = c.json();
                                     bool sliding = c.boolean({"use_sliding_window"}, false);
                                     if (j.contains("layer_types") && j["layer_types"].is_array())
                                       for (const auto& t : j["layer_types"])
                                         sliding = sliding || (t.is_string() && t.get<std::string>() != "full_attention");
                                     if (sliding)
                                       c.fail("sliding-window attention (use_sliding_window, layer_types) is not supported yet");
                                   });
}

}  // namespace posgeom::model
