// Qwen2 / Qwen2.5: the Llama-style decoder (llama_style.h) with biases on q, k and v.
// Sliding-window layers are refused until the heads analysis limits keys to the window.
#include "llama_style.h"

namespace posgeom::model {
namespace {

const llama_style::LlamaStyle& style() {
  static const llama_style::LlamaStyle s{"qwen2", "Qwen2ForCausalLM", /*qkv_bias=*/true};
  return s;
}

ModelConfig parseConfig(const io::JsonConfig& c) {
  const auto& j = c.json();
  bool sliding = c.boolean({"use_sliding_window"}, false);
  if (j.contains("layer_types") && j["layer_types"].is_array())
    for (const auto& t : j["layer_types"]) sliding = sliding || (t.is_string() && t.get<std::string>() != "full_attention");
  if (sliding) c.fail("sliding-window attention (use_sliding_window, layer_types) is not supported yet");
  return llama_style::parseConfig(c);
}

class Qwen2Model final : public llama_style::DecoderModel {
 public:
  Qwen2Model(const ModelConfig& config, const Weights& w, const Numerics& num) : DecoderModel(config, w, num, style()) {}
};

}  // namespace

Architecture qwen2Architecture() {
  return defineArchitecture<Qwen2Model>(
      {"qwen2", "Qwen2", {"model."}}, parseConfig, [](const ModelConfig& m) { return llama_style::configJson(m, style()); },
      [](const ModelConfig& m) { return llama_style::tensors(m, style()); }, {"silu", false, PositionScheme::kRope});
}

}  // namespace posgeom::model
