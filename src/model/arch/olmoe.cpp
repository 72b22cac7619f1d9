// OLMoE: the Llama-style decoder (llama_style.h) with q and k RMSNormed over all heads together
// (one weight over heads x head_dim, as OLMo-2) and a mixture of experts in every block:
// num_experts experts of intermediate_size, num_experts_per_tok a token, renormalised with
// norm_topk_prob (false unless given), their weights rounded to the activations' dtype; no
// shared expert; rms_norm_eps 1e-5 unless given. transformers clamps q and k after their norms
// (OLMo clamps before): clip_qkv is refused by name. --neurons is not available (block 0 is
// sparse).
#include "llama_style.h"

namespace posgeom::model {
namespace {

// transformers 5 saves num_experts; num_local_experts is its other name.
const mixture::Keys kOlmoeKeys{"num_experts", "num_local_experts", 64, 8, "intermediate_size", /*normalize_default=*/false,
                               /*normalize_key=*/true, /*qwen_layers=*/false};

}  // namespace

Architecture olmoeArchitecture() {
  llama_style::LlamaStyle style{"olmoe", "OlmoeForCausalLM"};
  style.joint_qk_norm = true;
  style.experts = &mixture::qwenNames();
  return llama_style::defineFamily(
      {"olmoe", "OLMoE", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        const auto& j = c.json();
        if (j.contains("clip_qkv") && !j["clip_qkv"].is_null())
          c.fail("clip_qkv is not supported for olmoe (transformers clamps q and k after their norms)");
        m.norm_eps = normEpsilon(c, {"rms_norm_eps"}, 1e-5);  // transformers' default for OLMoE
        mixture::readConfig(c, m, kOlmoeKeys);
        m.moe.weights_in_compute_dtype = true;
      },
      {"silu", false, PositionScheme::kRope, mixture::randomShape(true, false)},
      [](const ModelConfig& m, nlohmann::json& j) { mixture::writeConfig(m, j, kOlmoeKeys); });
}

}  // namespace posgeom::model
