#pragma once
// The Llama-style decoder several families share: RoPE (Hugging Face rotate_half, plain or
// scaled), RMSNorm, gated MLP, grouped-query attention, LM head untied unless
// tie_word_embeddings. A family's own file gives its names and what differs (LlamaStyle,
// and the config keys only it has). Private to model/arch.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "architectures.h"
#include "mixture.h"
#include "posgeom/model/model.h"
#include "posgeom/model/ops.h"
#include "posgeom/model/streamed_blocks.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model::llama_style {

// What a family changes in the shared decoder.
struct LlamaStyle {
  std::string model_type;       // "llama", "qwen2", ...
  std::string architecture;     // its config's "architectures" entry
  bool qkv_bias = false;        // biases on q, k and v (Qwen2), none on o
  bool qk_norm = false;         // Qwen3: each head's q and k RMSNormed (own weights) before RoPE
  bool joint_qk_norm = false;   // OLMo-2: q and k RMSNormed over all heads together (one weight
                                // over heads x head_dim) before RoPE (QueryKeyMaps::joint_norm)
  bool gemma_norms = false;     // Gemma: RMSNorm scales by 1 + w in float32; embeddings times sqrt(d)
  bool sandwich_norms = false;  // Gemma-2: norms after attention and before and after the MLP
  bool post_norms = false;      // OLMo-2: norms after attention and after the MLP, none before either;
                                // RMSNorm's scale applied in float32 and rounded once (as Gemma's)
  bool fused_projections = false;  // Phi-3: qkv_proj [q | k | v] and gate_up_proj [gate | up]
  bool partial_rotary = false;     // Phi-3: partial_rotary_factor < 1 turns the first dims only
  bool plain_layer_norms = false;  // OLMo: LayerNorm without weights or bias (eps 1e-5) for every norm
  bool layer_norms = false;        // StableLM: LayerNorm with weight and bias (eps norm_eps) for every norm
  bool dense_mlp = false;          // Starcoder2: act(c_fc x) then c_proj, not the gated MLP
  bool weight_only_layer_norms = false;  // Cohere: LayerNorm with a weight and no bias for every norm
  bool float32_norm_scale = false;  // gpt-oss: RMSNorm's scale applied in float32 and rounded once
  bool attention_sinks = false;     // gpt-oss: self_attn.sinks, each head's sink logit in its softmax
  // StableLM-2-12B: the per-head q/k LayerNorms (ModelConfig::qk_layer_norm) stored one tensor
  // a head, self_attn.{q,k}_layernorm.norms.{h}.weight, not Command-R+'s one [H, dh] q_norm.weight.
  bool head_norm_per_tensor = false;
  // Mixtral, Qwen-MoE: a mixture of experts (ModelConfig::moe) in place of the MLP of every
  // block it makes sparse, its tensors so named; null: dense MLPs.
  const mixture::ExpertNames* experts = nullptr;
};

// The keys every such config has: sizes, head_dim, attention_bias, RoPE from
// rope_parameters (transformers 5) or rope_theta / rope_scaling (earlier): plain, linear,
// dynamic and llama3 are read, every other type refused by name.
ModelConfig parseConfig(const io::JsonConfig& c);
// Sliding windows as Qwen2, Qwen3 and Gemma-2 give them: layer_types ("sliding_attention"
// layers get sliding_window), else `default_sliding(i)` for layer i when sliding_window is set
// (or when `default_window` > 0 stands in for an absent sliding_window, as Gemma-2's 4096).
std::vector<int64_t> layerWindows(const io::JsonConfig& c, int64_t layers, const std::function<bool(int64_t)>& default_sliding,
                                  int64_t default_window = 0);
// Qwen2's and Qwen3's windows: with use_sliding_window, layers from max_window_layers on.
void qwenWindows(const io::JsonConfig& c, ModelConfig& m);
// Mistral's, Phi-3's and Starcoder2's: sliding_window, when set, in every layer.
void windowsInEveryLayer(const io::JsonConfig& c, ModelConfig& m);
// What Gemma and Gemma-2 share: the activation under `activation_key` ("gelu" read as the
// tanh GELU, as transformers does), a tied head, head_dim 256 unless given.
void gemmaConfig(const io::JsonConfig& c, ModelConfig& m, const char* activation_key);
// A soft cap under `key`: `fallback` when absent (transformers' default), 0 (none) when null,
// else positive (tanh(x / cap) needs 1 / cap finite).
double softCap(const io::JsonConfig& c, const char* key, double fallback);
nlohmann::json configJson(const ModelConfig& m, const LlamaStyle& style);
std::vector<TensorSpec> tensors(const ModelConfig& m, const LlamaStyle& style);

// A family's reading of its own keys, after parseConfig, and its writing of them (random
// models) after configJson's.
using FamilyConfig = std::function<void(const io::JsonConfig&, ModelConfig&)>;
using FamilyJson = std::function<void(const ModelConfig&, nlohmann::json&)>;

// A Llama-style family's entry: `names`, the shared readers then `family_config`, and
// DecoderModel built with `style`.
Architecture defineFamily(ArchitectureNames names, LlamaStyle style, FamilyConfig family_config,
                          ShapeDefaults defaults = {"silu", false, PositionScheme::kRope}, FamilyJson family_json = {});

class DecoderModel : public Model {
 public:
  DecoderModel(const ModelConfig& config, const Weights& w, const Numerics& num, LlamaStyle style);
  at::Tensor embed(const at::Tensor& ids, BlockContext& context) const override;
  at::Tensor block(int64_t index, const at::Tensor& x, const BlockContext& context) const override;
  ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& r) const override;
  QueryKeyMaps queryKeyMaps(int64_t index) const override;
  // The config's, and with attention_sinks the block's sink logits.
  positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const override;
  // None with sandwich or post norms (the attention's output is normed before it is added) or a
  // q/k/v clamp (values no longer linear in the input).
  std::optional<NeuronCircuit> neuronCircuit(int64_t seq_len) const override;
  bool hasLmHead() const override { return true; }
  void readBlockAhead(int64_t index) const override { layers_.readAhead(index); }
  void releaseBlock(int64_t index) const override { layers_.release(index); }

 private:
  struct Layer {
    at::Tensor ln_1, ln_1_bias, ln_2_bias, up_bias, down_bias, q, q_bias, k, k_bias, v, v_bias, o, o_bias, q_norm, k_norm, ln_2, pre_mlp_ln, post_mlp_ln, gate, up,
        down;
    std::optional<mixture::Mixture> mixture;  // a sparse block's experts, in place of gate, up and down
  };
  Layer loadLayer(const Weights& w, int64_t index) const;
  at::Tensor norm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b = {}) const;
  at::Tensor headLayerNorm(const at::Tensor& x, const at::Tensor& w) const;
  at::Tensor attention(const Layer& l, int64_t block, const at::Tensor& a, const BlockContext& context) const;
  // The MLP of layer `l` on its normed input `m`: the gated dense MLP, a dense c_fc/c_proj
  // one, or a mixture of experts.
  at::Tensor mlp(const Layer& l, const at::Tensor& m) const;
  // A block's attention or MLP output as it is added to the residual stream (Granite's
  // residual_multiplier).
  at::Tensor toResidual(const at::Tensor& out) const;
  LlamaStyle style_;
  at::Tensor embed_, norm_, norm_bias_, lm_head_;
  std::vector<std::vector<double>> sinks_;  // per block, each head's sink logit (attention_sinks): read once, tiny
  StreamedBlocks<Layer> layers_;  // last: a read-ahead reads the members above
};

}  // namespace posgeom::model::llama_style
