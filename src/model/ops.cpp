#include "posgeom/model/ops.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include <torch/version.h>

namespace posgeom::model::ops {

at::Tensor linear(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, const Numerics& num) {
  return num.round(b.defined() ? at::linear(x, w, b) : at::linear(x, w));
}

at::Tensor layerNorm(const at::Tensor& x, const at::Tensor& w, const at::Tensor& b, double eps, const Numerics& num) {
  const auto wide = num.wide();
  const auto y = at::layer_norm(x.to(wide), {x.size(-1)}, w.to(wide), b.defined() ? b.to(wide) : at::Tensor(), eps);
  return num.round(y.to(x.scalar_type()));
}

at::Tensor rmsNorm(const at::Tensor& x, const at::Tensor& w, double eps, const Numerics& num) {
  const auto xf = x.to(num.wide());
  const auto normed = xf * at::rsqrt(xf.pow(2).mean(-1, /*keepdim=*/true) + eps);
  return num.round(w * num.round(normed.to(x.scalar_type())));
}

bool isKnownActivation(const std::string& name) {
  return name == "gelu" || name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast" ||
         name == "relu" || name == "silu" || name == "swish";
}

at::Tensor activation(const std::string& name, const at::Tensor& x, const Numerics& num) {
  if (name == "gelu") return num.round(at::gelu(x));
  if (name == "gelu_new" || name == "gelu_pytorch_tanh" || name == "gelu_fast") return num.round(at::gelu(x, "tanh"));
  if (name == "relu") return at::relu(x);
  if (name == "silu" || name == "swish") return num.round(at::silu(x));
  throw std::logic_error("unknown activation '" + name + "'");
}

at::Tensor splitHeads(const at::Tensor& x, int64_t heads) {
  const auto b = x.size(0), t = x.size(1);
  return x.view({b, t, heads, x.size(2) / heads}).transpose(1, 2);
}

at::Tensor mergeHeads(const at::Tensor& x) {
  const auto b = x.size(0), h = x.size(1), t = x.size(2), dh = x.size(3);
  return x.transpose(1, 2).reshape({b, t, h * dh});
}

namespace {

// Fused attention (flash / memory-efficient kernels on CUDA, a blocked kernel on the CPU)
// where LibTorch has it, no rounding is being emulated and the family adds nothing the
// fused kernels lack (bias, window inside the sequence, soft cap).
bool useFusedAttention(const AttentionShape& shape, int64_t seq, const Numerics& num) {
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  return num.rounding == num.dtype && !shape.bias.defined() && !shape.sinks.defined() &&
         (shape.window == 0 || shape.window >= seq) && shape.logit_cap == 0;
#else
  (void)shape;
  (void)seq;
  (void)num;
  return false;
#endif
}

// The keys that queries [first_query, first_query + len) may see: [first, end).
struct KeySpan {
  int64_t first = 0, end = 0;
};
KeySpan keySpan(const AttentionShape& shape, int64_t first_query, int64_t len, int64_t seq) {
  const int64_t first = shape.window > 0 ? std::max<int64_t>(0, first_query - shape.window + 1) : 0;
  if (shape.causal) return {first, first_query + len};
  return {first, shape.window > 0 ? std::min<int64_t>(seq, first_query + len - 1 + shape.window) : seq};
}

// One block of queries against the keys it may see. q [B,Hk,G*len,dh] holds the G query heads
// that share each key head; scores and probabilities are viewed as [B,H,len,keys].
at::Tensor attendBlock(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, int64_t heads, int64_t len,
                       int64_t first_query, const KeySpan& span, const AttentionShape& shape, double scale,
                       const Numerics& num) {
  const int64_t keys = k.size(2), batch = q.size(0);
  auto scores = num.round(at::matmul(q, k.transpose(-1, -2)).mul_(scale)).to(num.wide()).view({batch, heads, len, keys});
  if (shape.logit_cap > 0) scores = num.round(at::tanh(scores / shape.logit_cap) * shape.logit_cap).to(num.wide());
  if (shape.bias.defined()) scores.add_(shape.bias.narrow(-2, first_query, len).narrow(-1, span.first, keys));
  const auto opts = at::TensorOptions().dtype(at::kLong).device(q.device());
  if (shape.causal && shape.window > 0) {
    // Key i is seen by query n when n - window < i <= n.
    const auto n = at::arange(first_query, first_query + len, opts).unsqueeze(1);
    const auto i = at::arange(span.first, span.end, opts).unsqueeze(0);
    scores.masked_fill_(i.gt(n).logical_or(i.le(n - shape.window)), -std::numeric_limits<float>::infinity());
  } else if (shape.window > 0) {
    // Bidirectional: key i is seen by query n when |n - i| < window.
    const auto n = at::arange(first_query, first_query + len, opts).unsqueeze(1);
    const auto i = at::arange(span.first, span.end, opts).unsqueeze(0);
    scores.masked_fill_((i - n).abs().ge(shape.window), -std::numeric_limits<float>::infinity());
  } else if (shape.causal && len > 1) {
    // Only the last `len` keys can lie after a query of this block.
    const auto future = at::ones({len, len}, opts.dtype(at::kBool)).triu(1);
    scores.narrow(-1, keys - len, len).masked_fill_(future, -std::numeric_limits<float>::infinity());
  }
  // A sink (gpt-oss) is one more logit in each row's softmax, dropped after it.
  const auto probs = shape.sinks.defined()
                         ? num.round(at::softmax(at::cat({scores, shape.sinks.view({1, heads, 1, 1}).expand({batch, heads, len, 1})}, -1), -1)
                                         .narrow(-1, 0, keys)
                                         .to(q.scalar_type()))
                         : num.round(at::softmax(scores, -1).to(q.scalar_type()));
  return num.round(at::matmul(probs.reshape({batch, k.size(1), -1, keys}), v));
}

}  // namespace

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, bool causal, const at::Tensor& bias,
                     const Numerics& num, int64_t query_block) {
  AttentionShape shape;
  shape.causal = causal;
  shape.bias = bias;
  return attention(q, k, v, shape, num, query_block);
}

at::Tensor attention(const at::Tensor& q, const at::Tensor& k, const at::Tensor& v, const AttentionShape& shape,
                     const Numerics& num, int64_t query_block) {
  // Values may be narrower than queries and keys (DeepSeek's latent attention): dv.
  const int64_t batch = q.size(0), heads = q.size(1), seq = q.size(2), dh = q.size(3), key_heads = k.size(1), dv = v.size(3);
  const int64_t groups = heads / key_heads;
  const double scale = shape.scale > 0 ? shape.scale : 1.0 / std::sqrt(static_cast<double>(dh));
#if TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 1)
  if (useFusedAttention(shape, seq, num)) {
    const auto keys = groups == 1 ? k : k.repeat_interleave(groups, 1);
    const auto values = groups == 1 ? v : v.repeat_interleave(groups, 1);
    return at::scaled_dot_product_attention(q, keys, values, {}, 0.0, shape.causal, scale);
  }
#else
  (void)useFusedAttention;
#endif
  // Blocks of queries keep the [B,H,block,T] scores small (they stay in reused memory and in
  // cache) and let a causal block skip the keys after it (and before its window): half the
  // products at long T. Query heads are grouped by the key head they share, so keys are
  // never copied per head.
  const int64_t block = query_block > 0 ? std::min(query_block, seq) : seq;
  auto out = at::empty({batch, key_heads, groups, seq, dv}, q.options());
  const auto grouped_q = q.view({batch, key_heads, groups, seq, dh});
  for (int64_t start = 0; start < seq; start += block) {
    const int64_t len = std::min(block, seq - start);
    const KeySpan span = keySpan(shape, start, len, seq);
    const auto q_block = grouped_q.narrow(3, start, len).reshape({batch, key_heads, groups * len, dh});
    const auto ctx = attendBlock(q_block, k.narrow(2, span.first, span.end - span.first),
                                 v.narrow(2, span.first, span.end - span.first), heads, len, start, span, shape, scale, num);
    out.narrow(3, start, len).copy_(ctx.view({batch, key_heads, groups, len, dv}));
  }
  return out.view({batch, heads, seq, dv});
}

RotaryTables rotaryTables(int64_t seq_len, const std::vector<double>& inverse_frequencies, const Numerics& num,
                          bool interleaved, double scale) {
  // Angles in float64: at long positions float32 angles lose digits that the cos/sin keep.
  const auto dopt = at::TensorOptions().dtype(at::kDouble);
  const auto inv_freq = at::tensor(inverse_frequencies, dopt);
  const auto freqs = at::outer(at::arange(seq_len, dopt), inv_freq);
  const auto angles = interleaved ? freqs.repeat_interleave(2, -1) : at::cat({freqs, freqs}, -1);
  return {num.fit((at::cos(angles) * scale).to(num.wide())), num.fit((at::sin(angles) * scale).to(num.wide())), interleaved};
}

at::Tensor applyRotary(const at::Tensor& x, const RotaryTables& tables) {
  const auto dims = tables.cos.size(-1), half = dims / 2;
  if (dims < x.size(-1)) {
    const auto turned = applyRotary(x.narrow(-1, 0, dims), tables);
    return at::cat({turned, x.narrow(-1, dims, x.size(-1) - dims)}, -1);
  }
  const auto rotated = tables.interleaved
                           ? at::stack({-x.slice(-1, 1, dims, 2), x.slice(-1, 0, dims, 2)}, -1).flatten(-2)
                           : at::cat({-x.narrow(-1, half, half), x.narrow(-1, 0, half)}, -1);
  return x * tables.cos + rotated * tables.sin;
}

at::Tensor alibiSlopes(int64_t heads) {
  const auto closest = static_cast<int64_t>(std::pow(2.0, std::floor(std::log2(static_cast<double>(heads)))));
  auto base_for = [](double n) { return std::pow(2.0, -std::pow(2.0, -(std::log2(n) - 3.0))); };
  std::vector<float> slopes;
  const double base = base_for(static_cast<double>(closest));
  for (int64_t p = 1; p <= closest; ++p) slopes.push_back(static_cast<float>(std::pow(base, static_cast<double>(p))));
  if (closest != heads) {
    const double extra = base_for(2.0 * static_cast<double>(closest));
    const int64_t remaining = std::min(closest, heads - closest);
    for (int64_t p = 1; p < 1 + 2 * remaining; p += 2)
      slopes.push_back(static_cast<float>(std::pow(extra, static_cast<double>(p))));
  }
  return at::tensor(slopes, at::TensorOptions().dtype(at::kFloat));
}

std::vector<positions::AdditiveTerm> alibiTerms(const at::Tensor& slopes) {
  std::vector<positions::AdditiveTerm> terms;
  if (!slopes.defined()) return terms;
  const auto s = slopes.to(at::kCPU, at::kDouble).contiguous();
  for (int64_t h = 0; h < s.numel(); ++h) terms.push_back(positions::alibiTerm(s.data_ptr<double>()[h]));
  return terms;
}

at::Tensor alibiBias(const at::Tensor& slopes, int64_t seq_len, const at::Device& device) {
  positions::BlockPositions p;
  p.per_head = alibiTerms(slopes);
  return positionBias(p, slopes.numel(), seq_len, device);
}

AttentionShape attentionShape(const positions::BlockPositions& positions, bool causal, const at::Tensor& bias,
                              const at::Device& device) {
  AttentionShape shape;
  shape.causal = causal;
  shape.window = positions.shared.mask.window;
  shape.scale = positions.shared.scale;
  shape.logit_cap = positions.shared.logit_cap;
  shape.bias = bias;
  if (!positions.sinks.empty())
    shape.sinks = at::tensor(std::vector<float>(positions.sinks.begin(), positions.sinks.end())).to(device);
  return shape;
}

at::Tensor positionBias(const positions::BlockPositions& positions, int64_t heads, int64_t seq_len,
                        const at::Device& device) {
  if (!positions.hasAdditive()) return {};
  // Each head's term for every distance d = n - i in -(T-1) .. T-1, in float64 and then
  // rounded once (for ALiBi the float32 product -slope x d itself), picked per (n, i).
  const int64_t span = 2 * seq_len - 1;
  std::vector<float> by_distance(static_cast<size_t>(heads * span));
  for (int64_t h = 0; h < heads; ++h) {
    const auto& term = positions.additive(h);
    for (int64_t d = -(seq_len - 1); d < seq_len; ++d)
      by_distance[static_cast<size_t>(h * span + d + seq_len - 1)] = static_cast<float>(term.at(d));
  }
  const auto table = at::tensor(by_distance, at::TensorOptions().dtype(at::kFloat)).view({heads, span}).to(device);
  const auto pos = at::arange(seq_len, at::TensorOptions().dtype(at::kLong).device(device));
  const auto index = (pos.unsqueeze(1) - pos.unsqueeze(0) + (seq_len - 1)).flatten();
  return table.index_select(1, index).view({heads, seq_len, seq_len});
}

}  // namespace posgeom::model::ops
