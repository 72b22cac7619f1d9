#pragma once
// Contextual circuits and neurons of the first block, from the weights (the positional-kernel
// blog's first-layer analysis). Contextual heads attend broadly with a denominator that
// hardly depends on content, so each one's output is, to first order, its positional kernel
// averaging the value-output images of the tokens it sees. Per MLP neuron: how much its
// pre-activation moves with the token those heads carry, which tokens drive it, and how well
// that prediction follows the neuron's real pre-activation on the sampled windows. Eigen only.
//
// The linearisation: attention weights frozen at each head's kernel K_h(n, i) (the sampled
// -query kernel: denominators frozen); a token's attention input taken at the window's mean
// position embedding, its content part x(v) - P̄ (P̄ the mean attention input over the
// positions); the MLP norm's centring kept and its 1/σ frozen at its mean over the sampled
// windows, its bias and every constant (value and output biases, the positional part) left
// out. Then token v, attended with weight 1 by the contextual heads, adds to neuron j
//   c_j(v) = s (γ ⊙ w_j)ᵀ C Σ_h W_O,h W_V,h (x(v) - P̄),
// C the centring (identity for RMSNorm), s the mean 1/σ.
#include <Eigen/Dense>
#include <cstdint>
#include <vector>

#include "posgeom/heads/head_analysis.h"

namespace posgeom::heads {

struct NeuronCircuitMaps {
  Eigen::MatrixXf token_inputs;          // [V, d]
  std::vector<Eigen::MatrixXd> wv, wo;   // per head: [dh, d], [d, dh]
  Eigen::VectorXd norm_weight;           // [d]
  Eigen::VectorXd norm_bias;             // [d]; empty: RMSNorm
  double norm_eps = 1e-5;
  Eigen::MatrixXd w_in;                  // [N, d]
  Eigen::VectorXd b_in;                  // [N] or empty
};

// The sampled windows again: their ids and the residual stream the MLP norm reads.
struct NeuronWindows {
  std::vector<std::vector<int32_t>> ids;   // [S][T]
  std::vector<Eigen::MatrixXd> mlp_input;  // [S] x [T, d]
};

struct NeuronOptions {
  int top_tokens = 10;
  double group_similarity = 0.8;  // heads whose kernels are at least this alike join a group
  int64_t skip = 5;               // the kernel skip: queries and keys from here on
};

struct HeadGroup {
  std::vector<int64_t> heads;
  double min_similarity = 1;  // the least alike pair inside (1 for one head)
};

struct NeuronReport {
  int64_t neuron = 0;
  double score = 0;        // std over the vocabulary of c_j(v)
  // Prediction vs real pre-activation on the sampled windows (NaN below 2 windows): at each
  // query, both centred per position over the windows; and of their sums over each window's
  // queries, across the windows.
  double correlation = 0;
  double window_correlation = 0;
  std::vector<std::pair<int32_t, double>> top_positive, top_negative;  // c_j(v) - mean_v c_j(v)
};

struct NeuronAnalysis {
  std::vector<int64_t> contextual_heads;
  std::vector<HeadGroup> groups;
  double inverse_scale = 0;  // s
  int64_t windows = 0;
  std::vector<NeuronReport> neurons;  // every neuron, highest score first
};

// Kernel similarity: 1 - the mean over queries (from `skip`) of the total-variation distance
// between two heads' kernel rows.
double kernelSimilarity(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b, int64_t skip);

// `heads`: the first block's reports, with their kernels (HeadReport::kernel); `means` [T, d]
// its mean attention inputs. No contextual head: no neurons.
NeuronAnalysis analyzeNeurons(const NeuronCircuitMaps& circuit, const std::vector<HeadReport>& heads,
                              const Eigen::MatrixXd& means, const NeuronWindows& windows, const NeuronOptions& options,
                              unsigned threads = 0);

}  // namespace posgeom::heads
