// Llama / Llama-2 (and Llama-3 checkpoints without rope scaling): the Llama-style decoder
// (llama_style.h) with no biases.
#include "llama_style.h"

namespace posgeom::model {
namespace {

const llama_style::LlamaStyle& style() {
  static const llama_style::LlamaStyle s{"llama", "LlamaForCausalLM", /*qkv_bias=*/false};
  return s;
}

ModelConfig parseConfig(const io::JsonConfig& c) {
  if (c.boolean({"attention_bias"}, false)) c.fail("attention_bias = true is not supported");
  return llama_style::parseConfig(c);
}

class LlamaModel final : public llama_style::DecoderModel {
 public:
  LlamaModel(const ModelConfig& config, const Weights& w, const Numerics& num) : DecoderModel(config, w, num, style()) {}
};

}  // namespace

Architecture llamaArchitecture() {
  return defineArchitecture<LlamaModel>(
      {"llama", "Llama", {"model."}}, parseConfig, [](const ModelConfig& m) { return llama_style::configJson(m, style()); },
      [](const ModelConfig& m) { return llama_style::tensors(m, style()); }, {"silu", false, PositionScheme::kRope});
}

}  // namespace posgeom::model
