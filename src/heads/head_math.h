#pragma once
// Pieces every heads computation shares: per-head projections with RoPE, and the
// softmax over one query's key range. Private to src/heads.
#include <Eigen/Dense>
#include <optional>
#include <vector>

#include "posgeom/heads/positional_kernel.h"

namespace posgeom::heads::detail {

// RoPE's angles for positions 0..T-1 and pairs j < F: cos and sin [T, F], made once and
// used for every sample a head rotates (empty without RoPE).
struct RotaryTable {
  Eigen::MatrixXd cos, sin;
  bool interleaved = false;
  // cos and sin times `scale` (YaRN's attention_factor), as the model turns q and k.
  RotaryTable(Eigen::Index positions, const std::vector<double>& inverse_frequencies, bool interleaved = false,
              double scale = 1.0);
  static RotaryTable of(Eigen::Index count, const positions::Rope& rope) {
    return {count, rope.inverse_frequencies, rope.interleaved(), rope.scale};
  }
};
// RoPE alone, in place: row t of y [T, dh] turned to position t (pairs (j, j + F), j < F, or
// interleaved (2j, 2j + 1)).
void rotate(Eigen::Ref<Eigen::MatrixXd> y, const RotaryTable& table);

// A per-head RMSNorm in place, each row of y [rows, dh] scaled by `weights` (none if empty).
void normRows(Eigen::Ref<Eigen::MatrixXd> y, const Eigen::VectorXd& weights, double eps);

// What a head does to its raw projections (bias added) before RoPE, in place: OLMo's clamp
// to [-clip, clip] (clip > 0), then Qwen3's RMSNorm (norm non-empty), or with `row_scale`
// OLMo-2's: each row times its inverse RMS over all heads (jointInverseRms), then the norm's
// weights. Nothing for most heads.
struct ProjectionShape {
  const Eigen::VectorXd& norm;
  double eps = 1e-6;
  double clip = 0;
  const Eigen::VectorXd* row_scale = nullptr;
  Eigen::Index unscaled = 0;  // leading coordinates the row scale leaves (JointQkNorm's)
  bool nonlinear() const { return norm.size() > 0 || clip > 0 || row_scale; }
};
// A head's query shape and key shape, with `row_scale` where its maps have a joint norm.
inline ProjectionShape queryShape(const HeadMaps& head, const Eigen::VectorXd* row_scale) {
  return {head.q_norm, head.norm_eps, head.clip, head.joint ? row_scale : nullptr, head.joint ? head.joint->q_unscaled : 0};
}
inline ProjectionShape keyShape(const HeadMaps& head, const Eigen::VectorXd* row_scale) {
  return {head.k_norm, head.norm_eps, head.clip, head.joint ? row_scale : nullptr, head.joint ? head.joint->k_unscaled : 0};
}
// 1 / sqrt(mean square + eps) of each row of x w^T + b [T, rows of w]: the scale a norm over
// all heads gives row t of every head (ones where w has no rows: nothing is normed).
Eigen::VectorXd jointInverseRms(const Eigen::MatrixXd& x, const Eigen::MatrixXd& w, const Eigen::VectorXd& b, double eps);
void shapeRows(Eigen::Ref<Eigen::MatrixXd> y, const ProjectionShape& shape);

// Rows of x [T, d] mapped by w [dh, d] (+ bias), shaped and turned to their positions.
Eigen::MatrixXd project(const Eigen::MatrixXd& x, const Eigen::MatrixXd& w, const Eigen::VectorXd* bias,
                        const ProjectionShape& shape, const RotaryTable& table);

// The keys query n sees: [first, first + count).
struct KeyRange {
  Eigen::Index first = 0;
  Eigen::Index count = 0;
};
KeyRange keyRange(Eigen::Index n, Eigen::Index positions, const KernelSettings& settings);

// Query n's logits over its keys from their raw dot products: scaled, capped, and with the
// head's additive term (ALiBi, a relative bias) added, in place.
void finishLogits(Eigen::Ref<Eigen::VectorXd> logits, Eigen::Index n, const KeyRange& keys, double scale,
                  const KernelSettings& settings);

// Queries per product: each block of them against only the keys they see (in causal
// heads those up to the block's last query, about half the multiply-adds of [T, T]).
inline constexpr Eigen::Index kQueryBlock = 32;

// dots [key, query] = keys [T, dh] * queries [T, dh]^T for queries n0 .. n0 + width - 1
// against the keys they see between them (blockKeys), written to the top of `out`.
KeyRange blockKeys(Eigen::Index n0, Eigen::Index width, Eigen::Index positions, const KernelSettings& settings);
void blockDots(const Eigen::MatrixXd& keys, const Eigen::MatrixXd& queries, Eigen::Index n0, Eigen::Index width,
               const KeyRange& seen, Eigen::Ref<Eigen::MatrixXd> out);

// DeBERTa's disentangled terms (HeadPositions::relative_vectors) for one head over windows of
// T: its tables, and each (query, key)'s rows of them.
struct RelativeTerms {
  Eigen::MatrixXd keys, queries;  // [2 span, dh]; empty where the term is absent
  std::vector<int32_t> c2p_row, p2c_row;  // [n * T + i]
  Eigen::Index positions = 0;
  static std::optional<RelativeTerms> of(Eigen::Index positions, const KernelSettings& settings);
  // The queries' dots with the c2p key vectors [T, 2 span], and the keys' with the p2c query
  // vectors (empty where the term is absent).
  Eigen::MatrixXd queryDots(const Eigen::MatrixXd& q) const;
  Eigen::MatrixXd keyDots(const Eigen::MatrixXd& k) const;
  // dots [key - seen.first, query - n0] += q_n . keys[c2p row] (from query_dots, if not empty)
  // + k_i . queries[p2c row] (from key_dots, if not empty), for queries n0 .. n0 + width - 1.
  void add(Eigen::Ref<Eigen::MatrixXd> dots, Eigen::Index n0, Eigen::Index width, const KeyRange& seen,
           const Eigen::MatrixXd& query_dots, const Eigen::MatrixXd& key_dots) const;
};

// The kernel [query, key] of raw dot products kept [key, query]: each query's logits over
// its keys finished and softmaxed, zero elsewhere and for queries before the skip.
Eigen::MatrixXd kernelFromDots(const Eigen::MatrixXd& dots, double scale, const KernelSettings& settings);

// Softmax of `logits` in place; returns log sum exp (the log of the softmax denominator).
// With a sink (gpt-oss), its logit joins the denominator and its weight is left out: the
// weights sum to less than one.
double softmaxInPlace(Eigen::Ref<Eigen::VectorXd> logits, std::optional<double> sink = std::nullopt);
// The same, and the entropy of the weights it leaves: -sum a log a = log S - sum a d for
// d = logit - max and S = sum exp(d), with no logarithm per weight.
struct SoftmaxResult {
  double log_normaliser = 0;
  double entropy = 0;
};
// With a sink, the entropy is of the keys' weights renormalised (where attention goes among keys).
SoftmaxResult softmaxWithEntropy(Eigen::Ref<Eigen::VectorXd> logits, std::optional<double> sink = std::nullopt);

inline double logitScale(const HeadMaps& head, const KernelSettings& settings) {
  const double scale = settings.positions.scale;
  return scale > 0 ? scale : 1.0 / std::sqrt(static_cast<double>(head.wq.rows()));
}

}  // namespace posgeom::heads::detail
