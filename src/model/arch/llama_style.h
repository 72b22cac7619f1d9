#pragma once
// The Llama-style decoder several families share: RoPE (Hugging Face rotate_half), RMSNorm,
// SwiGLU MLP, grouped-query attention, LM head untied unless tie_word_embeddings. A
// family's own file gives its names and what differs (LlamaStyle). Private to model/arch.
#include <functional>
#include <string>
#include <vector>

#include "architectures.h"
#include "posgeom/model/model.h"
#include "posgeom/model/tensor_specs.h"

namespace posgeom::model::llama_style {

// What a family changes in the shared decoder.
struct LlamaStyle {
  std::string model_type;    // "llama", "qwen2"
  std::string architecture;  // its config's "architectures" entry
  bool qkv_bias = false;     // biases on q, k and v (Qwen2), none on o
};

// The keys every such config has; RoPE from rope_parameters (transformers 5) or
// rope_theta / rope_scaling (earlier), refusing every RoPE variant but the plain one.
ModelConfig parseConfig(const io::JsonConfig& c);
nlohmann::json configJson(const ModelConfig& m, const LlamaStyle& style);
std::vector<TensorSpec> tensors(const ModelConfig& m, const LlamaStyle& style);

// A Llama-style family's entry: `names`, the shared readers with `check_config` run first
// (what the family refuses), and DecoderModel built with `style`.
Architecture defineFamily(ArchitectureNames names, LlamaStyle style, std::function<void(const io::JsonConfig&)> check_config);

class DecoderModel : public Model {
 public:
  DecoderModel(const ModelConfig& config, const Weights& w, const Numerics& num, LlamaStyle style);
  ForwardOutputs forward(const ForwardRequest& r) const override;
  QueryKeyMaps queryKeyMaps(int64_t index) const override;
  KernelPositions kernelPositions() const override;
  bool hasLmHead() const override { return true; }

 private:
  struct Layer {
    at::Tensor ln_1, q, q_bias, k, k_bias, v, v_bias, o, ln_2, gate, up, down;
  };
  LlamaStyle style_;
  at::Tensor embed_, norm_, lm_head_;
  std::vector<Layer> layers_;
};

}  // namespace posgeom::model::llama_style
