// SmolLM3: the Llama decoder (llama_style.h) with NoPE blocks, where q and k are not turned:
// no_rope_layers holds 1 for a RoPE block and 0 for a NoPE one (absent: every
// no_rope_layer_interval-th block is NoPE, 4 by default). With use_sliding_window, the
// blocks layer_types marks sliding (by default the NoPE ones) see sliding_window keys. A
// tied head and a RoPE base of 2,000,000 unless given.
#include "llama_style.h"

namespace posgeom::model {
namespace {

std::vector<bool> unrotatedBlocks(const io::JsonConfig& c, int64_t layers) {
  const auto& j = c.json();
  std::vector<bool> unrotated(static_cast<size_t>(layers), false);
  if (j.contains("no_rope_layers") && !j["no_rope_layers"].is_null()) {
    const auto& flags = j["no_rope_layers"];
    if (!flags.is_array() || static_cast<int64_t>(flags.size()) < layers)
      c.fail("no_rope_layers must hold a 1 (RoPE) or 0 (NoPE) for each of the " + std::to_string(layers) + " layers");
    for (int64_t i = 0; i < layers; ++i) {
      const auto& f = flags[static_cast<size_t>(i)];
      if (!f.is_number_integer() || (f.get<int64_t>() != 0 && f.get<int64_t>() != 1))
        c.fail("no_rope_layers entry " + std::to_string(i) + " must be 1 (RoPE) or 0 (NoPE)");
      unrotated[static_cast<size_t>(i)] = f.get<int64_t>() == 0;
    }
    return unrotated;
  }
  const int64_t interval = c.positiveInt({"no_rope_layer_interval"}, 4);
  for (int64_t i = 0; i < layers; ++i) unrotated[static_cast<size_t>(i)] = (i + 1) % interval == 0;
  return unrotated;
}

}  // namespace

Architecture smollm3Architecture() {
  llama_style::LlamaStyle style{"smollm3", "SmolLM3ForCausalLM"};
  return llama_style::defineFamily(
      {"smollm3", "SmolLM3", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        const auto& j = c.json();
        if (!j.contains("rope_parameters") && !j.contains("rope_theta")) m.rope.theta = 2e6;
        m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
        m.unrotated_blocks = unrotatedBlocks(c, m.num_layers);
        // transformers gives a block a window only with use_sliding_window, whatever layer_types says.
        if (c.boolean({"use_sliding_window"}, false)) {
          const auto unrotated = m.unrotated_blocks;
          m.attention_windows = llama_style::layerWindows(c, m.num_layers, [unrotated](int64_t i) { return unrotated[static_cast<size_t>(i)]; });
        }
      },
      {"silu", true, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        // None given (a random model's shape): the reader's default, every fourth block NoPE.
        if (!m.unrotated_blocks.empty()) {
          j["no_rope_layers"] = nlohmann::json::array();
          for (int64_t b = 0; b < m.num_layers; ++b) j["no_rope_layers"].push_back(m.rotates(b) ? 1 : 0);
        }
        if (!m.attention_windows.empty()) j["use_sliding_window"] = true;
      });
}

}  // namespace posgeom::model
