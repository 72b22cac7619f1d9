#pragma once
// The one interface every architecture implements.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "posgeom/model/model_config.h"
#include "posgeom/model/numerics.h"
#include "posgeom/model/ops.h"

namespace posgeom::model {

// Receives each layer's activations as the forward pass produces them, so that
// they can be reduced and dropped instead of piling up. Tensors are valid only
// during the call.
class LayerObserver {
 public:
  virtual ~LayerObserver() = default;
  // hidden.l [B,T,d]: l = 0 is the embedding output, l is the residual stream after block l.
  virtual void onHidden(int64_t layer, const at::Tensor& hidden) = 0;
  // Block `block` (0-based) attention input after its input norm [B,T,d] (heads analysis).
  virtual void onAttentionInput(int64_t /*block*/, const at::Tensor& /*normed*/) {}
  // Block `block`'s residual stream as its MLP norm reads it [B,T,d] (the attention's output
  // added; contextual neurons). Only families with a NeuronCircuit emit it.
  virtual void onMlpInput(int64_t /*block*/, const at::Tensor& /*unnormed*/) {}
};

struct ForwardRequest {
  at::Tensor ids;                     // int64 [B,T]
  std::optional<bool> causal;         // default: causal unless the architecture is bidirectional
  bool want_final_norm = false;       // the last hidden state through the final norm
  bool want_logits = false;           // needs an LM head
  int64_t last_layer = -1;            // stop after this hidden state (-1: all)
  LayerObserver* observer = nullptr;  // may be null
  double dropout = 0;                 // training: dropout on embeddings and residual branches (GPT-2)
};

struct ForwardOutputs {
  at::Tensor final_norm;  // [B,T,d]; undefined unless asked for and the model has a final norm
  at::Tensor logits;      // [B,T,V]; undefined unless asked for and the model has an LM head
};

// What the blocks of one forward call share: the request (its observer, its dropout), the
// mask, and the position terms made once a call by embed (RoPE's tables, an additive bias).
struct BlockContext {
  // A constructor, not an aggregate: GCC 12 with LibTorch 2.11's headers warns that a
  // braced `{}` RotaryTables "may be used uninitialized" (the CUDA build failed on it).
  BlockContext(const ForwardRequest& r, bool causal_mask, int64_t length)
      : request(r), causal(causal_mask), seq_len(length) {}

  const ForwardRequest& request;
  bool causal = true;
  int64_t seq_len = 0;
  ops::RotaryTables rope;     // undefined tables: no rotation
  ops::RotaryTables local_rope;  // Gemma-3: the windowed blocks' own (ModelConfig::local_rope)
  at::Tensor attention_bias;  // the additive terms (ALiBi, a relative-bias table) [H,T,T], or undefined

  // Training: dropout on embeddings and residual branches (GPT-2); the tensor itself otherwise.
  at::Tensor drop(const at::Tensor& t) const { return request.dropout > 0 ? at::dropout(t, request.dropout, true) : t; }
  // Block `block`'s attention input after its input norm; its residual stream as the MLP's norm reads it.
  void attentionInput(int64_t block, const at::Tensor& normed) const {
    if (request.observer) request.observer->onAttentionInput(block, normed);
  }
  void mlpInput(int64_t block, const at::Tensor& unnormed) const {
    if (request.observer) request.observer->onMlpInput(block, unnormed);
  }
};

// Each query head's query and key maps in float32: q = wq x + bq, k = wk x + bk for the
// normed attention input x, then (Qwen3) each head's RMSNorm with its weights q_norm,
// k_norm, or (OLMo-2, joint_norm) one RMSNorm over all heads' q, and one over all k, whose
// weights for each head q_norm and k_norm hold. Key maps are per query head (grouped-query
// heads expanded: copies of a key map are adjacent, group = H / key-value heads).
struct QueryKeyMaps {
  at::Tensor wq;  // [H, dh, d]
  at::Tensor bq;  // [H, dh], zeros where the model has no bias
  at::Tensor wk;  // [H, dh, d]
  at::Tensor bk;  // [H, dh]
  at::Tensor q_norm{}, k_norm{};  // [H, dh] per-head RMSNorm scales; undefined: no such norm
  double norm_eps = 1e-6;
  double clip = 0;  // > 0: q and k clamped to [-clip, clip] after the bias, before the norm (OLMo)
  bool joint_norm = false;
  // DeepSeek's latent attention: each head's q (or k) is s(x) (wq x + bq) with s(x) the inverse
  // RMS of the latent q_latent x + q_latent_bias (its norm's weights folded into wq, bq), but
  // for a key's first k_unscaled coordinates (its rotary part) and for a q without a latent
  // (q_latent undefined). q_norm, k_norm stay undefined.
  at::Tensor q_latent{}, q_latent_bias{}, k_latent{}, k_latent_bias{};  // [rank, d], [rank]
  int64_t k_unscaled = 0;
};

// Block `block`'s path from tokens through its heads' values and outputs to its MLP
// neurons, as the contextual-neuron analysis reads it (float32, on the host).
struct NeuronCircuit {
  at::Tensor token_inputs;  // [V, d]: each token's attention input at the window's mean position embedding
  at::Tensor wv;            // [H, dh, d]: each head's value map (its bias adds a constant: left out)
  at::Tensor wo;            // [H, d, dh]: each head's columns of the output map
  at::Tensor norm_weight;   // [d]: the MLP norm's scale, as applied (Gemma's 1 + w)
  at::Tensor norm_bias;     // [d], or undefined (RMSNorm)
  bool rms_norm = false;    // RMSNorm: no centring
  double norm_eps = 1e-5;
  at::Tensor w_in, b_in;    // [N, d], [N] (undefined: no bias): the neurons' input maps
};

class Model {
 public:
  Model(ModelConfig config, Numerics numerics) : config_(std::move(config)), numerics_(numerics) {}
  virtual ~Model() = default;
  Model(const Model&) = delete;
  Model& operator=(const Model&) = delete;

  const ModelConfig& config() const { return config_; }
  const Numerics& numerics() const { return numerics_; }
  int64_t numHiddenStates() const { return config_.num_layers + 1; }

  // The one forward loop: embed, every block up to the last asked, then the epilogue when
  // the last block ran and a final norm or logits were asked; each hidden state goes to the
  // observer as it is made.
  ForwardOutputs forward(const ForwardRequest& request) const;
  // The same loop over a wave of batches, layer-major: each block runs on every batch before
  // the next block does, so its weights are read once a wave. `before_batch(k)` runs before
  // batch k's calls to its observer (a layer-major pass puts that batch's state back in the
  // accumulators); `after_block(i)` once block i has run on every batch (progress). Each
  // batch's outputs are bit for bit those of forward(requests[k]).
  std::vector<ForwardOutputs> forwardWave(const std::vector<ForwardRequest>& requests,
                                          const std::function<void(std::size_t)>& before_batch = {},
                                          const std::function<void(int64_t)>& after_block = {}) const;

  // The seam every family implements, one block at a time.
  // hidden.0 from checked ids on the device [B,T]; sets the call's position terms in `context`.
  virtual at::Tensor embed(const at::Tensor& ids, BlockContext& context) const = 0;
  // Block `index` (0-based): hidden.index -> hidden.(index + 1), its attention and MLP
  // inputs to the context's observer.
  virtual at::Tensor block(int64_t index, const at::Tensor& x, const BlockContext& context) const = 0;
  // The last hidden state through the final norm and the LM head, as `request` asks
  // (each output undefined where the model has none).
  virtual ForwardOutputs finish(const at::Tensor& x, const ForwardRequest& request) const = 0;
  virtual QueryKeyMaps queryKeyMaps(int64_t block) const = 0;
  // A model whose blocks' weights are streamed from the checkpoint (WeightResidency): block
  // `index` read ahead on a second thread, and let go once every batch has run it. A
  // resident model holds every block: nothing to do.
  virtual void readBlockAhead(int64_t /*index*/) const {}
  virtual void releaseBlock(int64_t /*index*/) const {}
  virtual bool hasFinalNorm() const { return true; }
  virtual bool hasLmHead() const = 0;
  // Per-head ALiBi slopes [H] (float32), undefined for other schemes.
  virtual at::Tensor alibiSlopes() const { return {}; }
  // How block `block`'s heads' logits depend on position beyond their inputs, for windows of
  // `seq_len`: what the forward applies (ops::attentionShape) and the heads analysis
  // reproduces. By default the config's mask, RoPE, window, scale and cap; ALiBi families
  // add their slopes.
  virtual positions::BlockPositions kernelPositions(int64_t block, int64_t seq_len) const;
  // The first block's circuit to its neurons for windows of `seq_len`; nullopt where the
  // family does not give it (then it emits no onMlpInput either).
  virtual std::optional<NeuronCircuit> neuronCircuit(int64_t /*seq_len*/) const { return std::nullopt; }

 protected:
  bool causalFor(const ForwardRequest& r) const { return r.causal.value_or(!config_.bidirectional); }
  int64_t lastLayerFor(const ForwardRequest& r) const;
  // Checks ids [B,T] against the vocabulary and positions (InputError) and moves them to
  // the device.
  at::Tensor idsOnDevice(const at::Tensor& ids) const;
  // The position terms of a call, from kernelPositions, for embed to keep in the context:
  // RoPE's tables, and the additive terms as a bias [H,T,T] (undefined where none; block 0's
  // terms, which ALiBi's are for every block).
  ops::RotaryTables rotaryTables(int64_t seq_len) const {
    return ops::rotaryTables(seq_len, kernelPositions(0, seq_len).shared.rope, numerics_);
  }
  // Where the windowed blocks turn by RoPE of their own (Gemma-3): each kind's tables, from
  // a block of each kind, into the context; and block `block`'s among them.
  void setRotaryTables(BlockContext& context, int64_t seq_len) const;
  const ops::RotaryTables& rotaryTablesFor(int64_t block, const BlockContext& context) const {
    return config_.usesLocalRope(block) ? context.local_rope : context.rope;
  }
  at::Tensor positionBias(int64_t seq_len) const {
    return ops::positionBias(additivePositions(seq_len), config_.num_heads, seq_len, numerics_.device);
  }
  // What the forward's one bias for every block reads (positionBias): block 0's positions. A
  // family whose kernelPositions reads a block's weights (DeBERTa's relative vectors) gives
  // them without, so that a streamed model does not read block 0 for it.
  virtual positions::BlockPositions additivePositions(int64_t seq_len) const { return kernelPositions(0, seq_len); }
  // Block `block`'s attention in this call, from its kernelPositions: the call's mask, its bias.
  ops::AttentionShape attentionShape(int64_t block, const BlockContext& context) const {
    return ops::attentionShape(kernelPositions(block, context.seq_len), context.causal, context.attention_bias,
                               numerics_.device);
  }
  // The config's kernel positions with ALiBi slopes [H] added (none when undefined).
  positions::BlockPositions alibiKernelPositions(const at::Tensor& slopes, int64_t block, int64_t seq_len) const;

 private:
  ModelConfig config_;
  Numerics numerics_;
};

}  // namespace posgeom::model
