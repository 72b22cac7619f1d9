// Mixtral: Mistral's decoder (sliding_window, when set, in every layer) with a mixture of
// experts in every block: num_local_experts experts (w1, w3, w2 under block_sparse_moe) of
// intermediate_size, num_experts_per_tok of them a token, their router's probabilities
// renormalised over the chosen ones and kept in float32 for the product. RMSNorm epsilon
// 1e-5 and RoPE base 1,000,000 unless given. --neurons is not available (a router picks
// which neurons a token reaches).
#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

const mixture::Keys kMixtralKeys{"num_local_experts", "num_experts", 8, 2, "intermediate_size", /*normalize_default=*/true,
                                 /*normalize_key=*/false, /*qwen_layers=*/false};

}  // namespace

Architecture mixtralArchitecture() {
  llama_style::LlamaStyle style{"mixtral", "MixtralForCausalLM"};
  style.experts = &mixture::mixtralNames();
  return llama_style::defineFamily(
      {"mixtral", "Mixtral", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.norm_eps = normEpsilon(c, {"rms_norm_eps"}, 1e-5);
        ropeThetaOr(c, m, 1e6);
        llama_style::windowsInEveryLayer(c, m);
        mixture::readConfig(c, m, kMixtralKeys);
      },
      {"silu", false, PositionScheme::kRope, mixture::randomShape(false, false)},
      [](const ModelConfig& m, nlohmann::json& j) { mixture::writeConfig(m, j, kMixtralKeys); });
}

}  // namespace posgeom::model
