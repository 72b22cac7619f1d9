#pragma once
// Pieces the families with one query map per head share. Private to model/arch.
#include "posgeom/model/model.h"

namespace posgeom::model::arch {

// A LayerNorm's weight and bias.
struct LayerNormWeights {
  at::Tensor w, b;
};

// Query and key maps of heads stored as rows [H * dh, d] with biases [H * dh] (undefined:
// no bias, zeros), each head's block of rows one map (QueryKeyMaps, float32). With grouped
// heads (key_value_heads < H), the key rows are [key_value_heads * dh, d], each key map
// repeated for the query heads it serves.
QueryKeyMaps perHeadMaps(const at::Tensor& q_w, const at::Tensor& q_b, const at::Tensor& k_w, const at::Tensor& k_b,
                         int64_t heads, int64_t head_dim, int64_t key_value_heads = 0);

// The value and output maps of heads stored as a linear layer's rows: value [H * dh, d],
// output [d, H * dh] (NeuronCircuit::wv [H, dh, d] and wo [H, d, dh], float32 on the host).
std::pair<at::Tensor, at::Tensor> perHeadValueOutput(const at::Tensor& v_w, const at::Tensor& o_w, int64_t heads,
                                                     int64_t head_dim);

// A NeuronCircuit of a LayerNorm family: `token_inputs` [V, d] already normed, the value
// and output maps as perHeadValueOutput reads them, the MLP's norm and input layer.
NeuronCircuit layerNormCircuit(const at::Tensor& token_inputs, const at::Tensor& v_w, const at::Tensor& o_w,
                               const LayerNormWeights& mlp_norm, double eps, const at::Tensor& w_in, const at::Tensor& b_in,
                               int64_t heads, int64_t head_dim);

}  // namespace posgeom::model::arch
