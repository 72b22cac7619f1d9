#include "head_maps.h"

namespace posgeom::model::arch {

QueryKeyMaps perHeadMaps(const at::Tensor& q_w, const at::Tensor& q_b, const at::Tensor& k_w, const at::Tensor& k_b,
                         int64_t heads, int64_t head_dim) {
  const int64_t d = q_w.size(1);
  auto maps = [&](const at::Tensor& w) { return w.to(at::kFloat).reshape({heads, head_dim, d}); };
  auto bias = [&](const at::Tensor& b) {
    return b.defined() ? b.to(at::kFloat).reshape({heads, head_dim})
                       : at::zeros({heads, head_dim}, at::TensorOptions().dtype(at::kFloat).device(q_w.device()));
  };
  return {maps(q_w), bias(q_b), maps(k_w), bias(k_b)};
}

}  // namespace posgeom::model::arch
