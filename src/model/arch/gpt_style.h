#pragma once
// The GPT-style decoder the older families share: LayerNorm with biases, one MLP without a
// gate, multi-head attention (grouped key/value heads where the config has them: Falcon);
// learned positions, ALiBi, RoPE (partial,
// rotate_half or interleaved) or none, as the config's scheme says. What differs between
// the families is either in their ModelConfig (parallel residual, post-norm, local layers,
// logit scale, a narrower embedding) or in their GptLayout (tensor names, how q, k and v
// are stored, which maps have biases). Private to model/arch.
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "architectures.h"

namespace posgeom::model::gpt_style {

// How a block stores its query, key and value maps.
enum class Qkv {
  kSeparate,      // three maps, qkv_names q, k, v
  kFusedColumns,  // one map whose outputs are q | k | v (GPT-2's c_attn)
  kFusedPerHead,  // one map whose outputs are [head][q | k | v][dh] (GPT-NeoX, BLOOM)
  // One map whose outputs are [key/value head][its G query heads | k | v][dh], G = heads /
  // key/value heads (Falcon: per head as kFusedPerHead with G = 1, multi-query with one group).
  kFusedGroups,
};

// Which of a block's maps carry a bias.
enum class Bias { kNone, kAlways, kWithAttentionBias /* ModelConfig::attention_bias */ };

// A family's module names (a tensor is the name + ".weight" or ".bias"; a block's are under
// block_prefix + i + "."). An empty name: the model has no such module.
struct GptLayout {
  std::string block_prefix;     // "h."
  std::string embed;            // the token table, [V, embedding width]
  std::string position_table;   // learned positions (used when the scheme is kLearned)
  int64_t position_offset = 0;  // OPT: position t is row t + 2
  std::string embedding_norm;   // BLOOM: a LayerNorm on the token embeddings (hidden.0)
  std::string project_in, project_out;  // OPT-350m: between a narrower embedding and the blocks
  std::string final_norm;               // absent with post-norm blocks
  std::vector<std::string> lm_heads = {"lm_head"};  // more than one: each optional, the first stored used
  bool lm_head_bias = false;                        // GPT-J: the (first) head's bias
  std::string attn_norm, mlp_norm;  // no mlp_norm: the MLP reads the attention's normed input (GPT-J)
  Qkv qkv = Qkv::kSeparate;
  std::vector<std::string> qkv_names;  // q, k, v; or the one fused map
  std::string out, mlp_in, mlp_out;
  Bias qkv_bias = Bias::kAlways, out_bias = Bias::kAlways, mlp_bias = Bias::kAlways;
  bool conv1d = false;        // GPT-2: maps stored [in, out]
  bool norms_listed_after = false;  // OPT: each block lists a sublayer's norm after its maps
  bool neuron_circuit = false;      // gives the contextual-neuron circuit (GPT-2)
  bool norm_bias = true;            // MPT: LayerNorms with a weight and no bias

  // The names in the order a family's modules list them.
  GptLayout& blocks(std::string prefix) { return block_prefix = std::move(prefix), *this; }
  GptLayout& embeddings(std::string tokens, std::string learned_positions = "") {
    embed = std::move(tokens), position_table = std::move(learned_positions);
    return *this;
  }
  GptLayout& norms(std::string attention, std::string mlp, std::string final) {
    attn_norm = std::move(attention), mlp_norm = std::move(mlp), final_norm = std::move(final);
    return *this;
  }
  GptLayout& attention(Qkv stored, std::vector<std::string> maps, std::string out_map, Bias maps_bias = Bias::kAlways,
                       Bias out_map_bias = Bias::kAlways) {
    qkv = stored, qkv_names = std::move(maps), out = std::move(out_map), qkv_bias = maps_bias, out_bias = out_map_bias;
    return *this;
  }
  GptLayout& mlp(std::string in, std::string out_map, Bias bias = Bias::kAlways) {
    mlp_in = std::move(in), mlp_out = std::move(out_map), mlp_bias = bias;
    return *this;
  }
};

// The tensors of `layout` for `m`, in the order the family's modules list them (random
// checkpoints draw their values in this order).
std::vector<TensorSpec> tensors(const ModelConfig& m, const GptLayout& layout);

// A GPT-style family's entry: its names, readers and defaults, models built from `layout`.
Architecture defineFamily(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                          decltype(Architecture::to_config_json) to_config_json, GptLayout layout,
                          ShapeDefaults defaults, bool supports_dropout = false);
// The same for a family whose names follow its config (Falcon's norms): the layout of each config.
using LayoutOf = std::function<GptLayout(const ModelConfig&)>;
Architecture defineFamily(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                          decltype(Architecture::to_config_json) to_config_json, LayoutOf layout_of,
                          ShapeDefaults defaults);

}  // namespace posgeom::model::gpt_style
