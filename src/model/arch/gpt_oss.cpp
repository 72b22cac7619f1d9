// gpt-oss (gpt-oss-20b, gpt-oss-120b, as bfloat16 checkpoints): the Llama-style decoder with
// biases on q, k, v and o (attention_bias, true unless given), each head's learned sink logit
// in every softmax (self_attn.sinks: it takes weight and gives no value), sliding windows in
// the layers layer_types names (every other one, from block 0, by default), YaRN, RMSNorm
// scaled in float32, and a mixture of experts in every block: the router's top k logits
// (num_experts_per_tok of num_local_experts, with its bias) softmaxed among themselves, each
// expert's fused gate_up_proj and down_proj with biases through a SwiGLU clamped at
// swiglu_limit (7) with swiglu_alpha (1.702). The Hub's MXFP4 checkpoints
// (quantization_config) are refused by name. --neurons is not available (block 0 is sparse).
#include "llama_style.h"

namespace posgeom::model {
namespace {

const mixture::Keys kGptOssKeys{"num_local_experts", nullptr, 32, 4, "intermediate_size", /*normalize_default=*/false,
                                /*normalize_key=*/false, /*qwen_layers=*/false};

void readGptOssMixture(const io::JsonConfig& c, ModelConfig& m) {
  mixture::readConfig(c, m, kGptOssKeys);
  auto& moe = m.moe;
  moe.softmax_after_top_k = true;
  moe.biases = true;
  moe.weights_in_compute_dtype = true;  // softmaxed in the logits' dtype, as transformers
  moe.swiglu_alpha = positiveNumber(c, {"swiglu_alpha"}, 1.702);
  moe.swiglu_limit = positiveNumber(c, {"swiglu_limit"}, 7.0);
}

}  // namespace

Architecture gptOssArchitecture() {
  llama_style::LlamaStyle style{"gpt_oss", "GptOssForCausalLM"};
  style.attention_sinks = true;
  style.float32_norm_scale = true;
  style.experts = &mixture::gptOssNames();
  ShapeDefaults defaults{"silu", false, PositionScheme::kRope, mixture::randomShape(true, false)};
  defaults.moe.softmax_after_top_k = true;
  defaults.moe.biases = true;
  defaults.moe.swiglu_alpha = 1.702;
  defaults.moe.swiglu_limit = 7.0;
  return llama_style::defineFamily(
      {"gpt_oss", "gpt-oss", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        const auto& j = c.json();
        if (j.contains("quantization_config") && !j["quantization_config"].is_null())
          c.fail("quantization_config is not supported for gpt_oss (the Hub's MXFP4 experts): use a bfloat16 checkpoint");
        m.attention_bias = c.boolean({"attention_bias"}, true);
        m.norm_eps = normEpsilon(c, {"rms_norm_eps"}, 1e-5);
        m.attention_windows = llama_style::layerWindows(c, m.num_layers, [](int64_t i) { return i % 2 == 0; }, 128);
        readGptOssMixture(c, m);
      },
      defaults,
      [](const ModelConfig& m, nlohmann::json& j) {
        mixture::writeConfig(m, j, kGptOssKeys);
        j.update({{"swiglu_alpha", m.moe.swiglu_alpha}, {"swiglu_limit", m.moe.swiglu_limit}, {"attention_bias", m.attention_bias}});
      });
}

}  // namespace posgeom::model
