#pragma once
// Floating-point operations of the pass to the hidden states, per token: what a
// benchmark divides by to compare a forward pass with the machine's matrix throughput.
// Torch-free.
#include <cstdint>
#include <vector>

#include "posgeom/model/architecture.h"

namespace posgeom::model {

// Parameters of the kProduct matrices: what multiplies tokens' activations, all experts held.
int64_t productParameters(const std::vector<TensorSpec>& specs);
// The same parameters as a token meets them, 2 FLOPs each: an expert counts by its share.
double activeProductParameters(const std::vector<TensorSpec>& specs);

// 2 x activeProductParameters, plus the attention products (q k^T and p v: 4 x heads x head_dim
// per visible key and layer). A causal query at position n sees n + 1 keys, (T + 1) / 2 on
// average; a bidirectional one sees T. Embedding lookups, norms and activations are
// not counted; nor is the LM head, which the analysis does not run.
double forwardFlopsPerToken(const ModelConfig& config, const std::vector<TensorSpec>& specs, int64_t seq_len,
                            bool causal);

}  // namespace posgeom::model
