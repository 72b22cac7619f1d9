#pragma once
// Pieces the families with one query map per head share. Private to model/arch.
#include "posgeom/model/model.h"

namespace posgeom::model::arch {

// A LayerNorm's weight and bias.
struct LayerNormWeights {
  at::Tensor w, b;
};

// Query and key maps of heads stored as rows [H * dh, d] with biases [H * dh] (undefined:
// no bias, zeros), each head's block of rows one map (QueryKeyMaps, float32).
QueryKeyMaps perHeadMaps(const at::Tensor& q_w, const at::Tensor& q_b, const at::Tensor& k_w, const at::Tensor& k_b,
                         int64_t heads, int64_t head_dim);

}  // namespace posgeom::model::arch
