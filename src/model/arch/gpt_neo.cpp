// GPT-Neo (TinyStories, GPT-Neo 125M-2.7B): GPT-2's learned positions and pre-LN blocks, but
// query, key and value as separate bias-free Linear maps, logits not scaled by 1/sqrt(dh),
// and global and local layers as attention_types lists them (local: the last window_size keys).
#include "gpt_neo_layer_types.h"
#include "gpt_style.h"

namespace posgeom::model {
namespace {

ModelConfig readGptNeoConfig(const io::JsonConfig& c) {
  auto m = readSizes(c, {"hidden_size"}, {"num_layers"}, {"num_heads"});
  const auto& j = c.json();
  m.intermediate_size = j.contains("intermediate_size") && !j["intermediate_size"].is_null()
                            ? c.requirePositiveInt({"intermediate_size"})
                            : 4 * m.hidden_size;
  m.max_positions = c.positiveInt({"max_position_embeddings"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = readActivation(c, "activation_function", "gelu_new");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, true);
  const int64_t window = c.positiveInt({"window_size"}, 256);
  for (const auto& type : gpt_neo::layerTypes(c, m.num_layers)) m.attention_windows.push_back(type == "local" ? window : 0);
  m.attention_scale = 1.0;  // GPT-Neo's logits are the raw dot products
  m.positions = PositionScheme::kLearned;
  return m;
}

nlohmann::json gptNeoConfigJson(const ModelConfig& m) {
  int64_t window = 256;
  nlohmann::json types = nlohmann::json::array();
  for (const int64_t w : m.attention_windows) {
    types.push_back({nlohmann::json::array({w > 0 ? "local" : "global"}), 1});
    if (w > 0) window = w;
  }
  if (m.attention_windows.empty()) types.push_back({nlohmann::json::array({"global"}), m.num_layers});
  auto j = sizesJson(m, "GPTNeoForCausalLM", "gpt_neo", "hidden_size", "num_layers", "num_heads");
  j.update({{"intermediate_size", m.intermediate_size}, {"max_position_embeddings", m.max_positions},
            {"layer_norm_epsilon", m.norm_eps},         {"activation_function", m.activation},
            {"attention_types", types},                 {"window_size", window},
            {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture gptNeoArchitecture() {
  using gpt_style::Bias;
  const auto l = gpt_style::GptLayout()
                     .blocks("h.")
                     .embeddings("wte", "wpe")
                     .norms("ln_1", "ln_2", "ln_f")
                     .attention(gpt_style::Qkv::kSeparate,
                                {"attn.attention.q_proj", "attn.attention.k_proj", "attn.attention.v_proj"},
                                "attn.attention.out_proj", Bias::kNone)
                     .mlp("mlp.c_fc", "mlp.c_proj");
  auto entry = gpt_style::defineFamily({"gpt_neo", "GPT-Neo", {"transformer."}}, readGptNeoConfig, gptNeoConfigJson, l,
                                       {"gelu_new", true, PositionScheme::kLearned});
  entry.layers_key = "num_layers";
  entry.unused_by_design = {"attn.attention.bias", "attn.attention.masked_bias"};  // the causal mask's buffers
  return entry;
}

}  // namespace posgeom::model
