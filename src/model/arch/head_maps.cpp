#include "head_maps.h"

namespace posgeom::model::arch {

QueryKeyMaps perHeadMaps(const at::Tensor& q_w, const at::Tensor& q_b, const at::Tensor& k_w, const at::Tensor& k_b,
                         int64_t heads, int64_t head_dim, int64_t key_value_heads) {
  const int64_t d = q_w.size(1), kv = key_value_heads > 0 ? key_value_heads : heads;
  // `count` heads' rows, repeated to one a query head (adjacent copies, as grouped attention pairs them).
  auto per_query_head = [&](const at::Tensor& t, int64_t count) {
    const auto shaped = t.dim() == 2 ? t.to(at::kFloat).reshape({count, head_dim, d}) : t.to(at::kFloat).reshape({count, head_dim});
    return count == heads ? shaped : shaped.repeat_interleave(heads / count, 0);
  };
  auto bias = [&](const at::Tensor& b, int64_t count) {
    return b.defined() ? per_query_head(b, count)
                       : at::zeros({heads, head_dim}, at::TensorOptions().dtype(at::kFloat).device(q_w.device()));
  };
  return {per_query_head(q_w, heads), bias(q_b, heads), per_query_head(k_w, kv), bias(k_b, kv)};
}

std::pair<at::Tensor, at::Tensor> perHeadValueOutput(const at::Tensor& v_w, const at::Tensor& o_w, int64_t heads,
                                                     int64_t head_dim) {
  const int64_t d = v_w.size(1);
  const auto host = at::TensorOptions().dtype(at::kFloat).device(at::kCPU);
  return {v_w.to(host).reshape({heads, head_dim, d}).contiguous(),
          o_w.to(host).reshape({o_w.size(0), heads, head_dim}).permute({1, 0, 2}).contiguous()};
}

NeuronCircuit layerNormCircuit(const at::Tensor& token_inputs, const at::Tensor& v_w, const at::Tensor& o_w,
                               const LayerNormWeights& mlp_norm, double eps, const at::Tensor& w_in, const at::Tensor& b_in,
                               int64_t heads, int64_t head_dim) {
  const auto host = at::TensorOptions().dtype(at::kFloat).device(at::kCPU);
  NeuronCircuit n;
  n.token_inputs = token_inputs.to(host);
  std::tie(n.wv, n.wo) = perHeadValueOutput(v_w, o_w, heads, head_dim);
  n.norm_weight = mlp_norm.w.to(host);
  n.norm_bias = mlp_norm.b.to(host);
  n.norm_eps = eps;
  n.w_in = w_in.to(host).contiguous();
  n.b_in = b_in.to(host);
  return n;
}

}  // namespace posgeom::model::arch
