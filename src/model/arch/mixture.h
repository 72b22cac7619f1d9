#pragma once
// A block's mixture of experts (ModelConfig::MixtureOfExperts) as transformers 5 runs it:
// the router's logits in the activations' dtype, softmaxed in float32, the top k taken
// (ties to the lower index, as torch.topk), each chosen expert run on its tokens only and
// its weighted output added in expert order. Its tensors are named as the Hub's checkpoints
// store them, one matrix per expert (transformers fuses them when it loads and splits them
// again when it saves). Private to model/arch.
#include <string>
#include <vector>

#include "posgeom/model/load/weights.h"
#include "posgeom/model/model_config.h"
#include "posgeom/model/numerics.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model::mixture {

// Where a family keeps a block's mixture and what it calls each expert's maps:
// Mixtral's "block_sparse_moe." with w1 (gate), w3 (up), w2 (down); Qwen's "mlp." with
// gate_proj, up_proj, down_proj.
struct ExpertNames {
  std::string module;
  std::string gate, up, down;
  std::string router = "gate";
  // gpt-oss: every expert's maps in one tensor a kind, stored [in, out]: experts.gate_up_proj
  // [E, d, 2f] (gate and up columns interleaved), experts.down_proj [E, f, d], their biases
  // experts.<name>_bias (not `gate`, `up`, `down`).
  bool fused = false;
  // The shared expert's module, and whether a sigmoid gate (Qwen's shared_expert_gate) scales it.
  std::string shared = "shared_expert";
  bool shared_gate = true;
};
const ExpertNames& mixtralNames();
const ExpertNames& qwenNames();
const ExpertNames& gptOssNames();
const ExpertNames& deepseekNames();  // Qwen's, with shared_experts ungated and the router's correction bias

// Where a family's config.json keeps the mixture, and transformers' defaults for it.
struct Keys {
  const char* experts;      // num_local_experts (Mixtral), num_experts (Qwen)
  const char* experts_alias;  // the other name, where transformers maps one to the other (Mixtral, Qwen3-MoE); or null
  int64_t experts_default;
  int64_t per_token_default;  // num_experts_per_tok
  const char* expert_size;  // intermediate_size (Mixtral), moe_intermediate_size (Qwen)
  bool normalize_default;   // norm_topk_prob when absent
  bool normalize_key;       // whether norm_topk_prob is read (Mixtral has none: it always renormalises)
  bool qwen_layers;         // mlp_only_layers and decoder_sparse_step choose dense blocks
};
void readConfig(const io::JsonConfig& c, ModelConfig& m, const Keys& keys);
// What readConfig reads, written back (random checkpoints).
void writeConfig(const ModelConfig& m, nlohmann::json& j, const Keys& keys);
// A random checkpoint's mixture (ShapeDefaults::moe): 4 experts, 2 a token, with or without
// a shared expert, the routing weights in the family's dtype.
MixtureOfExperts randomShape(bool weights_in_compute_dtype, bool shared_expert);

// Block `layer_prefix`'s mixture tensors: the router, each expert's three maps (the share of
// experts a token runs counted for FLOPs), a shared expert and its gate.
void addTensors(TensorSpecs& specs, const std::string& layer_prefix, const ModelConfig& m, const ExpertNames& names);

struct Expert {
  at::Tensor gate, up, down;
  at::Tensor gate_bias{}, up_bias{}, down_bias{};  // gpt-oss's; undefined elsewhere
};
struct Mixture {
  at::Tensor router;  // [experts, d]
  std::vector<Expert> experts;
  Expert shared;           // undefined without a shared expert
  at::Tensor shared_gate;  // [1, d]
  at::Tensor router_bias{};  // [experts] (gpt-oss), or undefined
  at::Tensor score_correction{};  // [experts] DeepSeek-V3's e_score_correction_bias, or undefined
};
Mixture load(const Weights& w, const std::string& layer_prefix, const ModelConfig& m, const ExpertNames& names);

// The mixture's output for the normed MLP input x [B, T, d].
at::Tensor forward(const Mixture& mixture, const at::Tensor& x, const ModelConfig& m, const Numerics& num);
// One gated MLP, down(act(gate x) * up x): an expert, or a dense block's MLP.
at::Tensor gatedMlp(const Expert& e, const at::Tensor& x, const std::string& activation, const Numerics& num);

}  // namespace posgeom::model::mixture
