// Qwen3-MoE: Qwen3's attention (each head's q and k RMSNormed before RoPE, biases only with
// attention_bias) with a mixture of experts in the blocks mlp_only_layers and
// decoder_sparse_step leave sparse: num_experts experts of moe_intermediate_size,
// num_experts_per_tok a token, renormalised with norm_topk_prob (false unless given, as
// transformers; the released models set it), their weights rounded to the activations'
// dtype; no shared expert. With use_sliding_window, sliding_window in every layer.
// --neurons is not available where block 0 is sparse.
#include "llama_style.h"

namespace posgeom::model {
namespace {

// transformers 5 saves num_experts as num_local_experts; the Hub's configs say num_experts.
const mixture::Keys kQwen3MoeKeys{"num_experts", "num_local_experts", 128, 8, "moe_intermediate_size", /*normalize_default=*/false,
                                  /*normalize_key=*/true, /*qwen_layers=*/true};

}  // namespace

Architecture qwen3MoeArchitecture() {
  llama_style::LlamaStyle style{"qwen3_moe", "Qwen3MoeForCausalLM"};
  style.qk_norm = true;
  style.experts = &mixture::qwenNames();
  return llama_style::defineFamily(
      {"qwen3_moe", "Qwen3-MoE", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        if (c.boolean({"use_sliding_window"}, false)) llama_style::windowsInEveryLayer(c, m);
        mixture::readConfig(c, m, kQwen3MoeKeys);
        m.moe.weights_in_compute_dtype = true;
      },
      {"silu", false, PositionScheme::kRope, mixture::randomShape(true, false)},
      [](const ModelConfig& m, nlohmann::json& j) {
        mixture::writeConfig(m, j, kQwen3MoeKeys);
        if (!m.attention_windows.empty()) j["use_sliding_window"] = true;
      });
}

}  // namespace posgeom::model
