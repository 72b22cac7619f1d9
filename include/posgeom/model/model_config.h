#pragma once
// The hyper-parameters every architecture reduces its config.json to.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/positions/rope.h"

namespace posgeom::model {

enum class PositionScheme { kLearned, kAlibi, kRope, kNone, kRelativeBias, kDisentangled };
const char* positionSchemeName(PositionScheme scheme);
struct ModelConfig;
// The scheme's name, and the blocks that do without it (SmolLM3's NoPE blocks).
std::string describePositions(const ModelConfig& c);

// RoPE's config and frequencies live with the positions vocabulary (Torch-free, shared
// with the heads analysis); the model reads and names them as its own.
using positions::RopeConfig;
using positions::ropeInverseFrequencies;

// A mixture of experts in place of a block's MLP (Mixtral, Qwen2-MoE, Qwen3-MoE): each
// token's router logits softmaxed in float32, its `experts_per_token` most probable experts
// run and their outputs summed weighted by those probabilities (renormalised over the chosen
// ones with normalize_top_k); Qwen2-MoE adds a shared expert every token takes, gated by a
// sigmoid. Blocks listed in dense_blocks keep a dense MLP of intermediate_size.
struct MixtureOfExperts {
  int64_t experts = 0;  // 0: every block's MLP is dense
  int64_t experts_per_token = 0;
  int64_t expert_size = 0;  // each expert's intermediate width
  bool normalize_top_k = true;
  // Qwen's routing weights are rounded to the activations' dtype before they scale an
  // expert's output; Mixtral's stay float32 and the product is rounded.
  bool weights_in_compute_dtype = false;
  int64_t shared_expert_size = 0;  // 0: none
  std::vector<bool> dense_blocks;  // true: that block's MLP is dense (Qwen's mlp_only_layers, decoder_sparse_step)
  // gpt-oss: the top k of the router's logits (with its bias) softmaxed among themselves,
  // biases on the router and on every expert's maps, and a clamped SwiGLU for the experts:
  // (clamp(up, -limit, limit) + 1) g sigmoid(alpha g) for g = min(gate, limit) (limit 0: none).
  bool softmax_after_top_k = false;
  bool biases = false;
  double swiglu_alpha = 0;
  double swiglu_limit = 0;
  // DeepSeek: the router's logits in float32, scored by a sigmoid (V3, whose choice adds each
  // expert's e_score_correction_bias) or a softmax (V2); with groups > 1 the top_groups best
  // groups of experts first (a group's score its best expert's (V2), its best two's summed
  // (V3)), then the top k among theirs; the weights (scores, without the bias) renormalised
  // where normalize_top_k says, then times routed_scale.
  bool grouped_routing = false;
  bool sigmoid_scores = false;
  int64_t groups = 1;
  int64_t top_groups = 1;
  double routed_scale = 1.0;
  bool sparse(int64_t block) const {
    return experts > 0 && !(block >= 0 && block < static_cast<int64_t>(dense_blocks.size()) && dense_blocks[static_cast<size_t>(block)]);
  }
};

// DeepSeek-V2/V3's multi-head latent attention (kv_rank 0: none). Queries straight from the
// attention input, or through a q_rank latent RMSNormed; keys and values through one kv_rank
// latent RMSNormed, each head's key its nope_dims from that latent beside rope_dims turned by
// RoPE, which every head shares and which come from the input unnormed; values value_dims
// wide. head_dim is nope_dims + rope_dims, what q . k sums over.
struct LatentAttention {
  int64_t q_rank = 0;  // 0: q_proj
  int64_t kv_rank = 0;
  int64_t nope_dims = 0;
  int64_t rope_dims = 0;
  int64_t value_dims = 0;
  bool float32_rope = false;  // V2: q and k turned in float32 (as complex products) and rounded once
  bool any() const { return kv_rank > 0; }
};

// DeBERTa-v2/v3's disentangled attention (ModelConfig::disentangled, span 0: none): 2 span
// relative embeddings (LayerNormed where norm_rel_ebd says), whose key vectors meet each query
// (c2p) and whose query vectors meet each key (p2c), rows by positions::DisentangledRows; those
// vectors from the block's own q and k maps (share_att_key) or from pos_query_proj and
// pos_key_proj; logits over sqrt(head_dim x (1 + the terms)). Learned absolute positions too
// where position_biased_input; the embeddings embedding_size wide and projected where that
// differs from hidden_size.
struct Disentangled {
  int64_t span = 0;
  int64_t buckets = 0;       // position_buckets (0: none)
  int64_t max_relative = 0;  // max_relative_positions
  bool c2p = false, p2c = false;
  bool shared_maps = false;
  bool normed_embeddings = false;
  bool absolute_positions = false;
  int64_t embedding_size = 0;
};

struct ModelConfig {
  std::string model_type;
  std::filesystem::path source;  // the config.json it came from
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // grouped-query attention; = num_heads otherwise
  int64_t intermediate_size = 0;
  int64_t max_positions = 0;  // 0: no learned limit (ALiBi)
  int64_t type_vocab_size = 0;
  double norm_eps = 1e-5;
  std::string activation;  // gelu, gelu_new, silu, ...
  RopeConfig rope;
  bool tie_word_embeddings = true;
  bool attention_bias = false;     // biases on q, k, v and o (Llama-style; GPT-NeoX's default)
  bool qkv_bias = false;           // biases on q, k and v only (StableLM's use_qkv_bias)
  bool mlp_bias = false;           // biases on the MLP's maps (Starcoder2's use_bias)
  bool gated_mlp = false;          // T5's "gated-<act>" feed-forward: act(wi_0 x) * wi_1 x
  bool qk_layer_norm = false;      // Command-R+'s use_qk_norm: each head's q and k through a bias-free LayerNorm
                                   // with weights per head ([heads, head_dim]), before RoPE
  bool norm_bias = true;           // LayerNorms with a bias (ModernBERT's norm_bias)
  // An encoder's MLM head (ModernBERT): biases on its dense map (classifier_bias) and on
  // its decoder (decoder_bias).
  bool head_dense_bias = false;
  bool decoder_bias = true;
  bool parallel_residual = false;  // GPT-NeoX, GPT-J: attention and MLP both read the block's input
  bool parallel_norms = false;     // Falcon-40B: and each through a norm of its own (else one shared)
  bool post_norm = false;          // OPT-350m: LayerNorm after each residual add, not before the block
  int64_t embedding_width = 0;     // OPT-350m: token embeddings narrower than the blocks (0: hidden_size)
  double qkv_clip = 0;             // OLMo's and MPT's clip_qkv: q, k and v clamped to [-clip, clip] (0: none)
  // ALiBi's per-head slopes where the family defines its own (MPT); empty: BLOOM's for num_heads.
  std::vector<double> alibi_slopes;
  bool bidirectional = false;  // BERT; causal for the others
  int64_t padding_idx = -1;    // RoBERTa: positions count the non-padding tokens from padding_idx + 1
  PositionScheme positions = PositionScheme::kLearned;
  std::string stored_dtype;  // torch_dtype as declared, informational
  int64_t head_dim = 0;      // 0: hidden_size / num_heads (Gemma and Qwen3 set their own)
  // Attention beyond the plain softmax(q k / sqrt(dh)): per block, the sliding window of keys
  // a query sees (keys i > n - window; 0 or absent: all); the logit scale (0: 1/sqrt(dh));
  // Gemma-2's soft caps cap tanh(x / cap) on the attention logits and on the LM head's.
  std::vector<int64_t> attention_windows;
  double attention_scale = 0;
  double attention_logit_cap = 0;
  double final_logit_cap = 0;
  // Granite's constant factors: the embeddings times one, each block's attention and MLP
  // outputs times another before they are added, the logits divided by a third (1: none).
  double embedding_multiplier = 1;
  double residual_multiplier = 1;
  double logit_divisor = 1;
  // SmolLM3's NoPE blocks: q and k not turned there (empty: RoPE in every block of a RoPE model).
  std::vector<bool> unrotated_blocks;
  MixtureOfExperts moe;
  LatentAttention latent;
  Disentangled disentangled;
  // Gemma-3: the RoPE of the blocks with a sliding window, where it differs from `rope`.
  std::optional<RopeConfig> local_rope;
  // T5's relative attention bias (kRelativeBias): each head's learned bias for the bucket of
  // n - i (positions::t5BiasTable), `relative_buckets` of them out to `relative_max_distance`.
  int64_t relative_buckets = 0;
  int64_t relative_max_distance = 0;

  int64_t headDim() const { return head_dim > 0 ? head_dim : hidden_size / num_heads; }
  // Learned absolute positions, alone or beside DeBERTa's relative ones: windows end at max_positions.
  bool learnedPositions() const { return positions == PositionScheme::kLearned || disentangled.absolute_positions; }
  bool rotates(int64_t block) const {
    return positions == PositionScheme::kRope &&
           !(block >= 0 && block < static_cast<int64_t>(unrotated_blocks.size()) && unrotated_blocks[static_cast<size_t>(block)]);
  }
  int64_t attentionWindow(int64_t block) const {
    return block >= 0 && block < static_cast<int64_t>(attention_windows.size()) ? attention_windows[static_cast<size_t>(block)] : 0;
  }
  bool usesLocalRope(int64_t block) const { return local_rope && attentionWindow(block) > 0; }
  const RopeConfig& ropeFor(int64_t block) const { return usesLocalRope(block) ? *local_rope : rope; }
};

}  // namespace posgeom::model
