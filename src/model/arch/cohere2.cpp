// Cohere2 (Command R7B, Command A): Cohere's decoder (cohere.cpp: weight-only LayerNorms,
// attention and MLP in parallel, interleaved RoPE, logits times logit_scale) with sliding
// windows in the layers layer_types names (three in four by default, sliding_window_pattern
// 4 in the Hub's older configs, sliding_window 4096) and RoPE in those layers only: the
// global ones see no position but the causal mask (NoPE).
#include <cmath>

#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {

Architecture cohere2Architecture() {
  llama_style::LlamaStyle style{"cohere2", "Cohere2ForCausalLM"};
  style.weight_only_layer_norms = true;
  return llama_style::defineFamily(
      {"cohere2", "Cohere2", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.norm_eps = normEpsilon(c, {"layer_norm_eps"}, 1e-5);
        m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
        m.rope.interleaved = true;
        m.parallel_residual = true;
        m.logit_divisor = 1.0 / positiveNumber(c, {"logit_scale"}, 0.0625);
        const int64_t pattern = c.positiveInt({"sliding_window_pattern"}, 4);
        m.attention_windows =
            llama_style::layerWindows(c, m.num_layers, [pattern](int64_t i) { return (i + 1) % pattern != 0; }, 4096);
        // RoPE only where there is a window: the global blocks are NoPE.
        m.unrotated_blocks.assign(static_cast<size_t>(m.num_layers), false);
        for (int64_t i = 0; i < m.num_layers; ++i) m.unrotated_blocks[static_cast<size_t>(i)] = m.attentionWindow(i) == 0;
      },
      {"silu", true, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        j.erase("rms_norm_eps");
        j.update({{"layer_norm_eps", m.norm_eps}, {"logit_scale", 1.0 / m.logit_divisor}});
      });
}

}  // namespace posgeom::model
