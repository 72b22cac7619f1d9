#pragma once
// Pieces every heads computation shares: per-head projections with RoPE, and the
// softmax over one query's key range. Private to src/heads.
#include <Eigen/Dense>

#include "posgeom/heads/positional_kernel.h"

namespace posgeom::heads::detail {

// Rows of x [T, d] mapped by w [dh, d] (+ bias) and, for RoPE, each row t rotated to
// position t (Hugging Face rotate_half: pairs (j, j + dh/2) turn by t * theta^(-2j/dh)).
Eigen::MatrixXd project(const Eigen::MatrixXd& x, const Eigen::MatrixXd& w, const Eigen::VectorXd* bias, double rope_theta);
// RoPE's angles for positions 0..T-1 and pairs j < dh/2: cos and sin [T, dh/2], made once
// and used for every sample a head rotates (empty for theta <= 0: no rotation).
struct RotaryTable {
  Eigen::MatrixXd cos, sin;
  RotaryTable(Eigen::Index positions, Eigen::Index head_dim, double rope_theta);
};
// RoPE alone, in place: row t of y [T, dh] turned to position t.
void rotate(Eigen::Ref<Eigen::MatrixXd> y, const RotaryTable& table);

// The keys query n sees: [first, first + count).
struct KeyRange {
  Eigen::Index first = 0;
  Eigen::Index count = 0;
};
KeyRange keyRange(Eigen::Index n, Eigen::Index positions, const KernelSettings& settings);

// Query n's scaled logits over its keys, from the row of raw dot products over all
// positions, with the ALiBi bias added.
Eigen::VectorXd rowLogits(const Eigen::RowVectorXd& dots, Eigen::Index n, const KeyRange& keys, double scale,
                          double alibi_slope);

// Adds ALiBi's -slope (n - i) to query n's logits over its keys.
void addAlibi(Eigen::Ref<Eigen::VectorXd> logits, Eigen::Index n, const KeyRange& keys, double alibi_slope);

// Softmax of `logits` in place; returns log sum exp (the log of the softmax denominator).
double softmaxInPlace(Eigen::Ref<Eigen::VectorXd> logits);
// The same, and the entropy of the weights it leaves: -sum a log a = log S - sum a d for
// d = logit - max and S = sum exp(d), with no logarithm per weight.
struct SoftmaxResult {
  double log_normaliser = 0;
  double entropy = 0;
};
SoftmaxResult softmaxWithEntropy(Eigen::Ref<Eigen::VectorXd> logits);

inline double logitScale(const HeadMaps& head) { return 1.0 / std::sqrt(static_cast<double>(head.wq.rows())); }

}  // namespace posgeom::heads::detail
