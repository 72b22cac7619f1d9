// Gemma-3 (text: gemma3_text, Gemma-3-1B and the language model of the larger ones saved
// alone): Gemma-2's decoder (gemma2.cpp: 1 + w norms around attention and MLP, embeddings
// times sqrt(d), logits times query_pre_attn_scalar^-1/2) with each head's q and k RMSNormed
// (1 + w) before RoPE, no soft caps unless given, five sliding-window blocks to one global
// (sliding_window_pattern, 6, or layer_types), and RoPE of their own in the windowed blocks:
// rope_parameters.sliding_attention (transformers 5) or rope_local_base_freq (10,000), the
// global blocks' from rope_parameters.full_attention or rope_theta (1,000,000) with any
// rope_scaling. EmbeddingGemma's bidirectional attention is refused by name.
#include <cmath>

#include "llama_style.h"
#include "rope_config.h"

namespace posgeom::model {
namespace {

// Gemma3TextConfig's values for what a multimodal checkpoint's text_config may leave out
// (the Hub's gemma-3-4b/12b/27b configs give only what differs), as transformers fills them.
nlohmann::json gemma3TextDefaults() {
  return {{"vocab_size", 262208},          {"hidden_size", 2304},      {"intermediate_size", 9216},
          {"num_hidden_layers", 26},       {"num_attention_heads", 8}, {"num_key_value_heads", 4},
          {"head_dim", 256},               {"max_position_embeddings", 131072}, {"rms_norm_eps", 1e-6},
          {"query_pre_attn_scalar", 256},  {"sliding_window", 4096}};
}

}  // namespace

Architecture gemma3Architecture() {
  llama_style::LlamaStyle style{"gemma3_text", "Gemma3ForCausalLM"};
  style.gemma_norms = true;
  style.sandwich_norms = true;
  style.qk_norm = true;
  return llama_style::defineFamily(
      {"gemma3_text", "Gemma-3", {"model."}}, style,
      [](const io::JsonConfig& c, ModelConfig& m) {
        if (c.boolean({"use_bidirectional_attention"}, false))
          c.fail("use_bidirectional_attention = true (EmbeddingGemma) is not supported for gemma3_text");
        llama_style::gemmaConfig(c, m, "hidden_activation");
        const int64_t pattern = c.positiveInt({"sliding_window_pattern"}, 6);
        m.attention_windows =
            llama_style::layerWindows(c, m.num_layers, [pattern](int64_t i) { return (i + 1) % pattern != 0; }, 4096);
        m.attention_scale = 1.0 / std::sqrt(positiveNumber(c, {"query_pre_attn_scalar"}, 256.0));
        m.attention_logit_cap = llama_style::softCap(c, "attn_logit_softcapping", 0.0);
        m.final_logit_cap = llama_style::softCap(c, "final_logit_softcapping", 0.0);
        ropeThetaOr(c, m, 1e6);
        m.local_rope = readLayerTypeRope(c, "sliding_attention");
        if (!m.local_rope) {
          RopeConfig local;
          local.theta = positiveNumber(c, {"rope_local_base_freq"}, 10000.0);
          m.local_rope = local;
        }
      },
      {"gelu_pytorch_tanh", true, PositionScheme::kRope},
      [](const ModelConfig& m, nlohmann::json& j) {
        if (m.local_rope) j["rope_local_base_freq"] = m.local_rope->theta;
        if (!j.contains("query_pre_attn_scalar")) j["query_pre_attn_scalar"] = m.headDim();
      });
}

// Gemma-3's multimodal checkpoints (gemma3: 4B, 12B, 27B): their language model, read as
// gemma3_text from text_config (with Gemma3TextConfig's defaults for what it leaves out) and
// from the tensors under language_model.model. (transformers' saves) or model.language_model.;
// the vision tower and its projector are left out by design.
Architecture gemma3MultimodalArchitecture() {
  auto entry = gemma3Architecture();
  entry.model_type = "gemma3";
  entry.family = "Gemma-3 (its language model)";
  entry.name_prefixes = {"language_model.model.", "model.language_model.", "language_model."};
  entry.parse_config = [text = entry.parse_config](const io::JsonConfig& c) {
    const auto& j = c.json();
    if (!j.contains("text_config") || !j["text_config"].is_object())
      c.fail("text_config must be an object (the language model's config)");
    auto config = gemma3TextDefaults();
    config.update(j["text_config"]);
    return text(io::JsonConfig(config, c.path()));
  };
  entry.to_config_json = [text = entry.to_config_json](const ModelConfig& m) {
    auto text_config = text(m);
    text_config["model_type"] = "gemma3_text";
    return nlohmann::json{{"architectures", {"Gemma3ForConditionalGeneration"}},
                          {"model_type", "gemma3"},
                          {"text_config", text_config},
                          {"torch_dtype", "float32"}};
  };
  // The tied head (a stored copy under the language model's name is not read either).
  for (const char* unused : {"vision_tower.", "multi_modal_projector.", "lm_head.weight"}) entry.unused_by_design.push_back(unused);
  return entry;
}

}  // namespace posgeom::model
