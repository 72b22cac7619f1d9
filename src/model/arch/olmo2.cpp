// OLMo-2: the Llama-style decoder (llama_style.h) with RMSNorms after attention and after the
// MLP and none before either, q and k each RMSNormed over all heads together (one weight over
// heads x head_dim, after the bias, before RoPE), every RMSNorm's scale applied in float32
// and rounded once; rms_norm_eps 1e-5 unless given.
#include "llama_style.h"

namespace posgeom::model {

Architecture olmo2Architecture() {
  llama_style::LlamaStyle style{"olmo2", "Olmo2ForCausalLM"};
  style.post_norms = true;
  style.joint_qk_norm = true;
  return llama_style::defineFamily({"olmo2", "OLMo-2", {"model."}}, style, [](const io::JsonConfig& c, ModelConfig& m) {
    m.norm_eps = normEpsilon(c, {"rms_norm_eps"}, 1e-5);  // transformers' default for OLMo-2
  });
}

}  // namespace posgeom::model
