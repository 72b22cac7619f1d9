// Qwen2-MoE (Qwen1.5-MoE, Qwen2-57B-A14B): Qwen2's decoder (qkv_bias, true unless given:
// biases on q, k and v; qwen windows) with a mixture of experts in the blocks
// mlp_only_layers and decoder_sparse_step leave sparse: num_experts experts of
// moe_intermediate_size, num_experts_per_tok a token, renormalised only with
// norm_topk_prob, their weights rounded to the activations' dtype; and a shared expert of
// shared_expert_intermediate_size every token takes, scaled by sigmoid(shared_expert_gate x).
// --neurons is not available where block 0 is sparse.
#include "llama_style.h"

namespace posgeom::model {
namespace {

const mixture::Keys kQwen2MoeKeys{"num_experts", nullptr, 60, 4, "moe_intermediate_size", /*normalize_default=*/false,
                                  /*normalize_key=*/true, /*qwen_layers=*/true};

}  // namespace

Architecture qwen2MoeArchitecture() {
  llama_style::LlamaStyle style{"qwen2_moe", "Qwen2MoeForCausalLM"};
  style.experts = &mixture::qwenNames();
  return llama_style::defineFamily(
      {"qwen2_moe", "Qwen2-MoE", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        m.qkv_bias = c.boolean({"qkv_bias"}, true);
        llama_style::qwenWindows(c, m);
        mixture::readConfig(c, m, kQwen2MoeKeys);
        m.moe.weights_in_compute_dtype = true;
        m.moe.shared_expert_size = c.positiveInt({"shared_expert_intermediate_size"}, 5632);
      },
      {"silu", false, PositionScheme::kRope, mixture::randomShape(true, true)},
      [](const ModelConfig& m, nlohmann::json& j) {
        mixture::writeConfig(m, j, kQwen2MoeKeys);
        j.update({{"qkv_bias", m.qkv_bias}, {"shared_expert_intermediate_size", m.moe.shared_expert_size}});
      });
}

}  // namespace posgeom::model
