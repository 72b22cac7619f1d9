// Gemma-3 (text: gemma3_text, Gemma-3-1B and the language model of the larger ones saved
// alone): Gemma-2's decoder (gemma2.cpp: 1 + w norms around attention and MLP, embeddings
// times sqrt(d), logits times query_pre_attn_scalar^-1/2) with each head's q and k RMSNormed
// (1 + w) before RoPE, no soft caps unless given, five sliding-window blocks to one global
// (sliding_window_pattern, 6, or layer_types), and RoPE of their own in the windowed blocks:
// rope_parameters.sliding_attention (transformers 5) or rope_local_base_freq (10,000), the
// global blocks' from rope_parameters.full_attention or rope_theta (1,000,000) with any
// rope_scaling. EmbeddingGemma's bidirectional attention is refused by name.
#include <cmath>

#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {

Architecture gemma3Architecture() {
  llama_style::LlamaStyle style{"gemma3_text", "Gemma3ForCausalLM"};
  style.gemma_norms = true;
  style.sandwich_norms = true;
  style.qk_norm = true;
  return llama_style::defineFamily(
      {"gemma3_text", "Gemma-3", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        if (c.boolean({"use_bidirectional_attention"}, false))
          c.fail("use_bidirectional_attention = true (EmbeddingGemma) is not supported for gemma3_text");
        llama_style::gemmaConfig(c, m, "hidden_activation");
        const int64_t pattern = c.positiveInt({"sliding_window_pattern"}, 6);
        m.attention_windows =
            llama_style::layerWindows(c, m.num_layers, [pattern](int64_t i) { return (i + 1) % pattern != 0; }, 4096);
        m.attention_scale = 1.0 / std::sqrt(positiveNumber(c, {"query_pre_attn_scalar"}, 256.0));
        m.attention_logit_cap = llama_style::softCap(c, "attn_logit_softcapping", 0.0);
        m.final_logit_cap = llama_style::softCap(c, "final_logit_softcapping", 0.0);
        ropeThetaOr(c, m, 1e6);
        m.local_rope = readLayerTypeRope(c, "sliding_attention");
        if (!m.local_rope) {
          RopeConfig local;
          local.theta = positiveNumber(c, {"rope_local_base_freq"}, 10000.0);
          m.local_rope = local;
        }
      },
      {"gelu_pytorch_tanh", true, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        if (m.local_rope) j["rope_local_base_freq"] = m.local_rope->theta;
        if (!j.contains("query_pre_attn_scalar")) j["query_pre_attn_scalar"] = m.headDim();
      });
}

}  // namespace posgeom::model
