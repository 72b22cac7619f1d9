#pragma once
// Building blocks shared by the architectures. Norms and softmax run in float32
// whatever the compute dtype, as Hugging Face's implementations do.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

#include <string>
#include <vector>

#include "posgeom/model/numerics.h"
#include "posgeom/positions/head_positions.h"

namespace posgeom::model::ops {

// x [..., in] @ w[out, in]^T + b[out] (b may be undefined).
at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const Numerics& num);
at::Tensor layerNorm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps, const Numerics& num);
at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& w, double eps, const Numerics& num);
// By config name: gelu (erf), gelu_new / gelu_pytorch_tanh / gelu_fast (tanh), relu, silu / swish.
at::Tensor activation(const std::string& name, const at::Tensor& x, const Numerics& num);
bool isKnownActivation(const std::string& name);

at::Tensor splitHeads(const at::Tensor& x, int64_t heads);  // [B,T,H*dh] -> [B,H,T,dh]
at::Tensor mergeHeads(const at::Tensor& x);                 // [B,H,T,dh] -> [B,T,H*dh]

// What a family's attention adds to softmax(q k^T / sqrt(dh)).
struct AttentionShape {
  bool causal = true;     // mask keys after the query
  int64_t window = 0;     // > 0 keeps keys i > n - window, and not causal i < n + window too
  double scale = 0;       // logit scale; 0: 1/sqrt(dh)
  double logit_cap = 0;   // > 0: scaled logits become cap tanh(logit / cap) (Gemma-2)
  at::Tensor bias;        // [H,T,T] or [1,H,T,T] added to the logits (ALiBi); may be undefined
  at::Tensor sinks;       // [H] float32: each head's sink logit in its softmax (gpt-oss); may be undefined
};
// A block's shape from its positions: `causal` as the call asks, the window either way, the
// additive term as `bias` (positionBias, made once a call).
AttentionShape attentionShape(const positions::BlockPositions& positions, bool causal, const at::Tensor& bias = {},
                              const at::Device& device = at::kCPU);
// The block's additive terms as a bias [H,T,T] float32 on `device` (entry n, i: head h's term
// for n - i); undefined where no head adds one.
at::Tensor positionBias(const positions::BlockPositions& positions, int64_t heads, int64_t seq_len,
                        const at::Device& device);

// Scaled dot-product attention. q [B,H,T,dh]; k, v [B,Hk,T,dh] with H a multiple of Hk
// (grouped-query heads share key heads). Queries go in blocks of `query_block` (0: all at
// once); the result does not depend on it.
inline constexpr int64_t kQueryBlock = 128;
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const AttentionShape& shape,
                     const Numerics& num, int64_t query_block = kQueryBlock);
// The plain case: causal or not, with an optional bias.
at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal,
                     const at::Tensor& bias, const Numerics& num, int64_t query_block = kQueryBlock);

// RoPE over the first 2 x F dims of each head (F inverse frequencies; the rest of the head
// passes unturned, GPT-NeoX's and GPT-J's partial rotary): the Hugging Face convention
// rotate_half turns pairs (j, j + F); GPT-J's rotate_every_two (interleaved) pairs (2j, 2j + 1).
struct RotaryTables {
  at::Tensor cos;  // [T, 2F]
  at::Tensor sin;  // [T, 2F]
  bool interleaved = false;
};
// cos and sin times `scale` (YaRN's attention_factor), as transformers multiplies them.
RotaryTables rotaryTables(int64_t seq_len, const std::vector<double>& inverse_frequencies, const Numerics& num,
                          bool interleaved = false, double scale = 1.0);
inline RotaryTables rotaryTables(int64_t seq_len, const positions::Rope& rope, const Numerics& num) {
  return rotaryTables(seq_len, rope.inverse_frequencies, num, rope.interleaved(), rope.scale);
}
at::Tensor applyRotary(const at::Tensor& x, const RotaryTables& tables);  // x [B,H,T,dh]

// ALiBi slopes for any head count, as BLOOM defines them (non-powers of two interleaved).
at::Tensor alibiSlopes(int64_t heads);  // float32 [H]
// Each head's ALiBi term from slopes [H] (none where undefined).
std::vector<positions::AdditiveTerm> alibiTerms(const at::Tensor& slopes);
// -slope_h * (n - i) for query n and key i: [H,T,T], float32 (positionBias of alibiTerms).
at::Tensor alibiBias(const at::Tensor& slopes, int64_t seq_len, const at::Device& device);

}  // namespace posgeom::model::ops
