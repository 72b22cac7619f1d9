// Granite (3.x dense): the Llama decoder (llama_style.h) with four constant factors: the
// embeddings times embedding_multiplier, the attention logits times attention_multiplier
// (instead of 1/sqrt(head_dim)), each block's attention and MLP outputs times
// residual_multiplier before they are added, and the logits divided by logits_scaling.
// transformers' defaults are 1 for each (the attention's too).
#include <cmath>

#include "llama_style.h"

namespace posgeom::model {

Architecture graniteArchitecture() {
  llama_style::LlamaStyle style{"granite", "GraniteForCausalLM"};
  return llama_style::defineFamily(
      {"granite", "Granite", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.embedding_multiplier = positiveNumber(c, {"embedding_multiplier"}, 1.0);
        m.attention_scale = positiveNumber(c, {"attention_multiplier"}, 1.0);
        m.residual_multiplier = positiveNumber(c, {"residual_multiplier"}, 1.0);
        m.logit_divisor = positiveNumber(c, {"logits_scaling"}, 1.0);
      },
      {"silu", false, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        j.erase("query_pre_attn_scalar");  // Gemma-2's key for the logit scale; Granite's below
        j.update({{"embedding_multiplier", m.embedding_multiplier},
                  {"attention_multiplier", m.attention_scale > 0 ? m.attention_scale : 1.0 / std::sqrt(static_cast<double>(m.headDim()))},
                  {"residual_multiplier", m.residual_multiplier},
                  {"logits_scaling", m.logit_divisor}});
      });
}

}  // namespace posgeom::model
