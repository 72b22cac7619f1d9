// OLMo (1): the Llama-style decoder (llama_style.h) whose norms are LayerNorms without
// weights or bias, with q, k and v clamped to [-clip_qkv, clip_qkv] when it is set.
#include "llama_style.h"

namespace posgeom::model {

Architecture olmoArchitecture() {
  llama_style::LlamaStyle style{"olmo", "OlmoForCausalLM"};
  style.plain_layer_norms = true;
  return llama_style::defineFamily({"olmo", "OLMo", {"model."}}, style, [](const io::JsonConfig& c, ModelConfig& m) {
    const auto& j = c.json();
    if (j.contains("clip_qkv") && !j["clip_qkv"].is_null()) {
      m.qkv_clip = c.number({"clip_qkv"}, 0);
      if (!(m.qkv_clip > 0)) c.fail("clip_qkv must be positive or null");
    }
  });
}

}  // namespace posgeom::model
