#pragma once
// The positional kernel of one attention head (DESIGN §4): how the head spreads attention
// over positions when queries and keys are the mean attention inputs P_i. Eigen only.
#include <Eigen/Dense>
#include <string>

namespace posgeom::heads {

struct HeadMaps {
  Eigen::MatrixXd wq;  // [dh, d]
  Eigen::VectorXd bq;  // [dh]
  Eigen::MatrixXd wk;  // [dh, d]
  // [dh] or empty (zero). Unrotated, a key bias adds q . b_k to every key's logit alike and
  // cancels in the softmax, so it is left out (k0); under RoPE it turns with its key's
  // position and does not: the heads stage gives it for rotary heads only (Qwen2).
  Eigen::VectorXd bk;
};

struct KernelSettings {
  bool causal = true;         // keys i <= n; false: every key (BERT)
  int64_t skip = 5;           // keys before this position are outside the softmax
  double alibi_slope = 0;     // BLOOM: bias -slope (n - i)
  double rope_theta = 0;      // Llama: rotate q at n and k at i (Hugging Face rotate_half)
};

// K [T, T] with the mean embedding as query: row n is K_n(i) over keys i (zero outside
// the softmax's range); rows n < skip are zero. `means` [T, d] holds P_i for i = 0..T-1.
Eigen::MatrixXd positionalKernel(const HeadMaps& head, const Eigen::MatrixXd& means, const KernelSettings& settings);

// ETC(n) = 1 / sum_i K_n(i)^2 for every query row (0 for rows without keys).
Eigen::VectorXd effectiveTokenCount(const Eigen::MatrixXd& kernel);
// The smallest w such that 90% of row n's mass lies within distance w of n.
int64_t window90(const Eigen::MatrixXd& kernel, Eigen::Index n);

struct ClassThresholds {
  double local = 0.1;    // ETC below this share of the keys: local
  double uniform = 0.5;  // ETC above this share: uniform; in between: slow-decay
};
std::string classify(double etc, int64_t keys, const ClassThresholds& thresholds);

}  // namespace posgeom::heads
