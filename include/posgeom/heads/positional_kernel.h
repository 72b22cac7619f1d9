#pragma once
// The positional kernel of one attention head (DESIGN §4): how the head spreads attention
// over positions when queries and keys are the mean attention inputs P_i. Eigen only.
#include <Eigen/Dense>
#include <memory>
#include <string>
#include <vector>

#include "posgeom/positions/head_positions.h"

namespace posgeom::heads {

// OLMo-2's q and k norms, over every head's coordinates together: the maps of all of a
// block's heads stacked ([H dh, d] and, for keys, as many rows as the model has key maps)
// with their biases. A row's mean square over all of them, plus the head's norm_eps,
// divides this head's coordinates before q_norm / k_norm scale them. Shared by the heads.
// DeepSeek's latent attention has the same form with the latent maps in their place (the
// RMSNorm of a latent, then a linear map: the head's maps fold in its weights); its keys'
// first k_unscaled coordinates (the rotary part every head shares, taken from the input
// unnormed) are not divided, nor are queries made without a latent (no wq: q_unscaled all).
struct JointQkNorm {
  Eigen::MatrixXd wq, wk;
  Eigen::VectorXd bq, bk;
  Eigen::Index q_unscaled = 0, k_unscaled = 0;
};

struct HeadMaps {
  Eigen::MatrixXd wq;  // [dh, d]
  Eigen::VectorXd bq;  // [dh]
  Eigen::MatrixXd wk;  // [dh, d]
  // [dh] or empty (zero). Unrotated, a key bias adds q . b_k to every key's logit alike and
  // cancels in the softmax, so it is left out (k0); under RoPE it turns with its key's
  // position and does not: the heads stage gives it for rotary heads only (Qwen2).
  Eigen::VectorXd bk;
  // [dh] or empty: Qwen3's per-head RMSNorm of q (after the bias, before RoPE), and of k.
  Eigen::VectorXd q_norm{}, k_norm{};
  double norm_eps = 1e-6;
  double clip = 0;  // > 0: OLMo's clip_qkv, each coordinate of q and k clamped to [-clip, clip] first
  // Set: q_norm and k_norm are this head's part of norms over all heads (OLMo-2), not its own.
  std::shared_ptr<const JointQkNorm> joint{};
};

struct KernelSettings {
  posgeom::positions::HeadPositions positions;  // as the model applies them (Model::kernelPositions)
  int64_t skip = 5;                    // keys before this position are outside the softmax
};

// RoPE's plain inverse frequencies theta^(-2j/r), j < r/2, for the first r dims of a head.
std::vector<double> plainRope(double theta, int64_t rotary_dims);

// K [T, T] with the mean embedding as query: row n is K_n(i) over keys i (zero outside
// the softmax's range); rows n < skip are zero. `means` [T, d] holds P_i for i = 0..T-1.
Eigen::MatrixXd positionalKernel(const HeadMaps& head, const Eigen::MatrixXd& means, const KernelSettings& settings);

// ETC(n) = 1 / sum_i K_n(i)^2 for every query row (0 for rows without keys), of the row
// renormalised over its keys where a sink took a share of it: (sum_i K_n(i))^2 / sum_i K_n(i)^2.
Eigen::VectorXd effectiveTokenCount(const Eigen::MatrixXd& kernel);
// The smallest w such that 90% of row n's mass on keys lies within distance w of n.
int64_t window90(const Eigen::MatrixXd& kernel, Eigen::Index n);

// Translation equivariance of a kernel: how far the offset profile p_n(δ) = K_n(n − δ)
// (renormalised over the offsets) of each query changes with n. Offsets δ = 0..D−1 for a
// causal head (−(D−1)..D−1 for a bidirectional one), D = half the keys of the last query
// (at least 1); the queries are those whose keys cover every offset; the score is the mean
// total-variation distance, ½ Σ_δ |p_n(δ) − p_ref(δ)|, between each of them and the last
// of them. 0: the kernel is a function of the offset alone. NaN with fewer than two such
// queries.
double translationEquivarianceTv(const Eigen::MatrixXd& kernel, const KernelSettings& settings);

// Mean over the queries n >= settings.skip of the total-variation distance
// ½ Σ_i |A_n(i) − K_n(i)| between two [T, T] row-stochastic maps (attention and kernel).
double meanRowTv(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::Index first_query);

struct ClassThresholds {
  double local = 0.1;    // ETC below this share of the keys: local
  double uniform = 0.5;  // ETC above this share: uniform; in between: slow-decay
};
std::string classify(double etc, int64_t keys, const ClassThresholds& thresholds);

}  // namespace posgeom::heads
