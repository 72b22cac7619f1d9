#include "posgeom/model/model.h"

#include <algorithm>

#include "posgeom/base/error.h"

namespace posgeom::model {

int64_t Model::lastLayerFor(const ForwardRequest& r) const {
  return r.last_layer < 0 ? config_.num_layers : std::min(r.last_layer, config_.num_layers);
}

ForwardOutputs Model::forward(const ForwardRequest& r) const { return forwardWave({r}).front(); }

std::vector<ForwardOutputs> Model::forwardWave(const std::vector<ForwardRequest>& requests,
                                               const std::function<void(std::size_t)>& before_batch,
                                               const std::function<void(int64_t)>& after_block) const {
  const std::size_t n = requests.size();
  std::vector<BlockContext> contexts;
  std::vector<at::Tensor> xs(n);
  contexts.reserve(n);
  int64_t last = 0;  // the deepest block any batch asks for
  for (const auto& r : requests) last = std::max(last, lastLayerFor(r));
  auto observe = [&](std::size_t k, int64_t layer) {
    if (requests[k].observer) requests[k].observer->onHidden(layer, xs[k]);
  };
  auto enter = [&](std::size_t k) {
    if (before_batch && requests[k].observer) before_batch(k);
  };
  if (last > 0) readBlockAhead(0);  // read while the batches are embedded
  for (std::size_t k = 0; k < n; ++k) {
    const auto& r = requests[k];
    const auto ids = idsOnDevice(r.ids);
    // The additive terms (ALiBi, a relative-bias table) as one bias for every block: a
    // family with a new scheme only says it in kernelPositions.
    const int64_t t = ids.size(1);
    contexts.emplace_back(r, causalFor(r), t);
    // Batches of one length share it (an ALiBi bias is [H,T,T] a batch otherwise).
    contexts.back().attention_bias = k > 0 && contexts.front().seq_len == t ? contexts.front().attention_bias : positionBias(t);
    enter(k);
    xs[k] = embed(ids, contexts.back());
    observe(k, 0);
  }
  for (int64_t i = 0; i < last; ++i) {
    if (i + 1 < last) readBlockAhead(i + 1);  // the next block's weights read while this one runs
    for (std::size_t k = 0; k < n; ++k) {
      if (i >= lastLayerFor(requests[k])) continue;
      enter(k);
      xs[k] = block(i, xs[k], contexts[k]);
      observe(k, i + 1);
    }
    releaseBlock(i);
    if (after_block) after_block(i);
  }
  std::vector<ForwardOutputs> outputs(n);
  for (std::size_t k = 0; k < n; ++k) {
    const auto& r = requests[k];
    if ((r.want_final_norm || r.want_logits) && lastLayerFor(r) == config_.num_layers) outputs[k] = finish(xs[k], r);
  }
  return outputs;
}

at::Tensor Model::idsOnDevice(const at::Tensor& ids) const {
  if (ids.dim() != 2 || ids.scalar_type() != at::kLong)
    throw InputError("input_ids", "expected int64 ids of shape [B,T]");
  if (ids.numel() == 0) throw InputError("input_ids", "no tokens");
  const auto lo = ids.min().item<int64_t>();
  const auto hi = ids.max().item<int64_t>();
  if (lo < 0 || hi >= config_.vocab_size)
    throw InputError("input_ids", "token id " + std::to_string(lo < 0 ? lo : hi) + " is outside the vocabulary of " +
                                      std::to_string(config_.vocab_size));
  if (config_.learnedPositions() && config_.max_positions > 0 && ids.size(1) > config_.max_positions)
    throw InputError("input_ids", "sequence length " + std::to_string(ids.size(1)) + " exceeds the model's " +
                                      std::to_string(config_.max_positions) + " positions");
  // Ids already on a GPU (the trainer's) stay there: only host memory can be page-locked.
  if (!numerics_.device.is_cuda() || !ids.is_cpu()) return ids.to(numerics_.device);
  // From page-locked memory the copy runs without holding up the host.
  return ids.pin_memory().to(numerics_.device, /*non_blocking=*/true);
}

positions::BlockPositions Model::kernelPositions(int64_t block, int64_t seq_len) const {
  positions::BlockPositions p;
  auto& k = p.shared;
  k.mask.causal = !config_.bidirectional;
  k.mask.window = config_.attentionWindow(block);
  if (config_.rotates(block))
    k.rope.inverse_frequencies = ropeInverseFrequencies(config_.ropeFor(block), config_.headDim(), config_.max_positions, seq_len);
  k.rope.pairing = config_.rope.interleaved ? positions::RopePairing::kInterleaved : positions::RopePairing::kRotateHalf;
  k.rope.scale = config_.ropeFor(block).attention_factor;
  k.scale = config_.attention_scale;
  k.logit_cap = config_.attention_logit_cap;
  return p;
}

void Model::setRotaryTables(BlockContext& context, int64_t seq_len) const {
  if (!config_.local_rope) {
    context.rope = rotaryTables(seq_len);  // block 0's, every block's
    return;
  }
  // Each kind's from the first block of that kind: with a window (its own RoPE), without.
  bool made[2] = {false, false};
  for (int64_t b = 0; b < config_.num_layers; ++b) {
    const bool local = config_.usesLocalRope(b);
    if (made[local]) continue;
    (local ? context.local_rope : context.rope) = ops::rotaryTables(seq_len, kernelPositions(b, seq_len).shared.rope, numerics_);
    made[local] = true;
  }
}

positions::BlockPositions Model::alibiKernelPositions(const at::Tensor& slopes, int64_t block, int64_t seq_len) const {
  positions::BlockPositions p = Model::kernelPositions(block, seq_len);
  p.per_head = ops::alibiTerms(slopes);
  return p;
}

}  // namespace posgeom::model
