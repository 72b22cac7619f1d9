#include "posgeom/heads/sampled_attention.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <cmath>
#include <functional>
#include <numeric>

#include "head_math.h"

namespace posgeom::heads {
namespace {

// Mean over query positions of std_c Z[c,n] / mean_c Z[c,n], from log Z [S, T].
double denominatorSpread(const Eigen::MatrixXd& log_z, Eigen::Index first_query) {
  if (log_z.rows() < 2 || first_query >= log_z.cols()) return std::numeric_limits<double>::quiet_NaN();
  double total = 0;
  for (Eigen::Index n = first_query; n < log_z.cols(); ++n) {
    const Eigen::ArrayXd z = (log_z.col(n).array() - log_z.col(n).maxCoeff()).exp();
    const double mean = z.mean();
    total += std::sqrt((z - mean).square().mean()) / mean;
  }
  return total / static_cast<double>(log_z.cols() - first_query);
}

// Quickselect on the mass instead of a sort: split the candidates around their median
// weight; the heavier half either holds what is still needed (look inside it) or is all
// taken (look in the lighter half for the rest). O(T) per query, not O(T log T).
int64_t selectKeysHolding(double* first, double* last, double need) {
  int64_t taken = 0;
  while (last - first > 1) {
    double* mid = first + (last - first) / 2;
    std::nth_element(first, mid, last, std::greater<>());  // [first, mid) >= *mid >= (mid, last)
    const double heavier = std::accumulate(first, mid, 0.0);
    if (heavier >= need) {
      last = mid;
    } else if (heavier + *mid >= need) {
      return taken + (mid - first) + 1;
    } else {
      need -= heavier + *mid;
      taken += (mid - first) + 1;
      first = mid + 1;
    }
  }
  // One candidate left: it completes the mass (or it is the last key there is); none left:
  // every key was taken.
  return taken + (last - first);
}

// Weights by size relative to the heaviest: the bits of a positive double order as its
// value, so the top bits (exponent and 4 of the mantissa) cut each octave in 16, and
// bucket b holds the weights 16ths of an octave below the heaviest's; the last bucket
// everything from 16 octaves down, zero included. Every weight of a bucket outweighs
// those of the buckets after it.
constexpr int kWeightBuckets = 256;
uint64_t weightKey(double weight) {
  uint64_t bits = 0;
  std::memcpy(&bits, &weight, sizeof bits);
  return bits >> 48;
}

// keysHolding on its own storage, which it reorders. One pass sums each bucket's mass:
// the buckets before the one where the mass is reached are taken whole, and only that
// bucket's keys (a few of a query's hundreds) go to the quickselect. Weights >= 0.
int64_t keysHoldingInPlace(Eigen::Ref<Eigen::VectorXd> weights, double mass) {
  if (weights.size() == 0) return 0;
  const uint64_t top = weightKey(weights.maxCoeff());
  auto bucketOf = [top](double w) {
    return static_cast<int>(std::min<uint64_t>(top - weightKey(w), kWeightBuckets - 1));
  };
  std::array<double, kWeightBuckets> bucket_mass{};
  std::array<int64_t, kWeightBuckets> bucket_keys{};
  for (const double w : weights) {
    const auto b = static_cast<std::size_t>(bucketOf(w));
    bucket_mass[b] += w;
    ++bucket_keys[b];
  }
  double need = mass - 1e-12;
  int64_t taken = 0;
  int b = 0;
  for (; b < kWeightBuckets - 1 && bucket_mass[static_cast<std::size_t>(b)] < need; ++b) {
    need -= bucket_mass[static_cast<std::size_t>(b)];
    taken += bucket_keys[static_cast<std::size_t>(b)];
  }
  double* first = weights.data();
  double* crossing_end = std::partition(first, first + weights.size(), [&](double w) { return bucketOf(w) == b; });
  return taken + selectKeysHolding(first, crossing_end, need);
}

using detail::kQueryBlock;

// dots [key, query] = keys [T, dh] * queries [T, dh]^T wherever the loop over queries
// reads it: queries from the skip on, their keys from the skip to the last one they see.
void keyQueryDots(const Eigen::MatrixXd& keys, const Eigen::MatrixXd& queries, const KernelSettings& s,
                  Eigen::MatrixXd& dots) {
  const Eigen::Index t = queries.rows();
  for (Eigen::Index n0 = s.skip; n0 < t; n0 += kQueryBlock) {
    const Eigen::Index width = std::min(kQueryBlock, t - n0);
    const detail::KeyRange seen = detail::blockKeys(n0, width, t, s);
    detail::blockDots(keys, queries, n0, width, seen, dots.block(seen.first, n0, t - seen.first, width));
  }
}

// Heads that shape their projections (Qwen3's norm, OLMo's clamp): the decomposition is of the
// shaped query, q(x) = q(P) + (q(x) - q(P)), so `cvec` [T, dh] (raw cvec W^T) becomes
// shape(pos_raw + cvec) - pos_shaped. Nothing for plain heads.
void shapedContext(Eigen::MatrixXd& cvec, const Eigen::MatrixXd& pos_raw, const Eigen::MatrixXd& pos_shaped,
                   const detail::ProjectionShape& shape) {
  if (!shape.nonlinear()) return;
  cvec += pos_raw;
  detail::shapeRows(cvec, shape);
  cvec -= pos_shaped;
}

}  // namespace

int64_t keysHolding(Eigen::VectorXd weights, double mass) { return keysHoldingInPlace(weights, mass); }

const std::vector<std::string>& qkMapNames() {
  static const std::vector<std::string> names{"pos_pos", "pos_cvec", "cvec_pos", "cvec_cvec", "total", "attention"};
  return names;
}

JointScales jointScalesOfMeans(const JointQkNorm& joint, double eps, const Eigen::MatrixXd& means, Eigen::Index sample_rows) {
  return {detail::jointInverseRms(means, joint.wq, joint.bq, eps), detail::jointInverseRms(means, joint.wk, joint.bk, eps),
          Eigen::VectorXd(sample_rows), Eigen::VectorXd(sample_rows)};
}

void jointScalesOfSamples(const JointQkNorm& joint, double eps, const Eigen::Ref<const Eigen::MatrixXd>& rows,
                          Eigen::Index first, JointScales& scales) {
  scales.q_samples.segment(first, rows.rows()) = detail::jointInverseRms(rows, joint.wq, joint.bq, eps);
  scales.k_samples.segment(first, rows.rows()) = detail::jointInverseRms(rows, joint.wk, joint.bk, eps);
}

SampledAttention sampleAttention(const HeadMaps& head, const Eigen::MatrixXd& means, const Eigen::MatrixXd& samples,
                                 const KernelSettings& s, bool keep_maps) {
  const Eigen::Index t = means.rows();
  Eigen::MatrixXd cvec = samples;
  for (Eigen::Index c = 0; t > 0 && c < samples.rows() / t; ++c) cvec.middleRows(c * t, t) -= means;
  const Eigen::MatrixXd q_means = means * head.wq.transpose(), k_means = means * head.wk.transpose();
  const Eigen::MatrixXd q_cvec = cvec * head.wq.transpose(), k_cvec = cvec * head.wk.transpose();
  JointScales joint;
  if (head.joint) {
    joint = jointScalesOfMeans(*head.joint, head.norm_eps, means, samples.rows());
    jointScalesOfSamples(*head.joint, head.norm_eps, samples, 0, joint);
  }
  return sampleAttention(head, HeadProjections{q_means, k_means, q_cvec, k_cvec, head.joint ? &joint : nullptr}, s, keep_maps);
}

SampledAttention sampleAttention(const HeadMaps& head, const HeadProjections& p, const KernelSettings& s, bool keep_maps) {
  const Eigen::Index t = p.q_means.rows(), dh = p.q_means.cols();
  const double scale = detail::logitScale(head, s);
  SampledAttention out;
  out.samples = t > 0 ? p.q_cvec.rows() / t : 0;
  if (s.skip >= t) {
    out.kernel = out.mean_kernel = Eigen::MatrixXd::Zero(t, t);
    return out;
  }

  // Dot products are kept transposed, [key, query], so that each query's keys are one
  // contiguous column segment.
  Eigen::MatrixXd q_pos = p.q_means, k_pos = p.k_means;  // [T, dh]
  q_pos.rowwise() += head.bq.transpose();
  if (head.bk.size() > 0) k_pos.rowwise() += head.bk.transpose();  // positional, as the query bias
  const Eigen::MatrixXd q_pos_raw = q_pos, k_pos_raw = k_pos;
  const Eigen::VectorXd* q_row_scale = p.joint ? &p.joint->q_means : nullptr;
  const Eigen::VectorXd* k_row_scale = p.joint ? &p.joint->k_means : nullptr;
  const auto q_shape = detail::queryShape(head, q_row_scale), k_shape = detail::keyShape(head, k_row_scale);
  Eigen::VectorXd q_sample_scale, k_sample_scale;  // a sample's rows' own joint scales
  const auto q_sample_shape = detail::queryShape(head, p.joint ? &q_sample_scale : nullptr),
             k_sample_shape = detail::keyShape(head, p.joint ? &k_sample_scale : nullptr);
  detail::shapeRows(q_pos, q_shape);
  detail::shapeRows(k_pos, k_shape);
  const Eigen::MatrixXd q_pos_shaped = q_pos, k_pos_shaped = k_pos;
  const auto rope = detail::RotaryTable::of(t, s.positions.rope);  // once: every sample turns by the same angles
  detail::rotate(q_pos, rope);
  detail::rotate(k_pos, rope);
  Eigen::MatrixXd pos_pos(t, t);
  keyQueryDots(k_pos, q_pos, s, pos_pos);
  // DeBERTa's c2p and p2c: the positional query's and key's parts in pos_pos, a sample's
  // context query's in cvec_pos and its context key's in pos_cvec, so that the four parts
  // still sum to the logit.
  const auto relative = detail::RelativeTerms::of(t, s);
  const Eigen::MatrixXd no_dots;
  Eigen::MatrixXd q_relative, k_relative;
  if (relative) {
    q_relative = relative->queryDots(q_pos), k_relative = relative->keyDots(k_pos);
    for (Eigen::Index n0 = s.skip; n0 < t; n0 += kQueryBlock) {
      const Eigen::Index width = std::min(kQueryBlock, t - n0);
      const detail::KeyRange seen = detail::blockKeys(n0, width, t, s);
      relative->add(pos_pos.block(seen.first, n0, seen.count, width), n0, width, seen, q_relative, k_relative);
    }
  }
  // The mean-embedding query's kernel (positionalKernel's) from the same products.
  out.mean_kernel = detail::kernelFromDots(pos_pos, scale, s);
  if (out.samples == 0) {
    out.kernel = Eigen::MatrixXd::Zero(t, t);
    return out;
  }
  if (keep_maps) out.maps.assign(qkMapNames().size(), Eigen::MatrixXd::Zero(t, t));
  // [key, query]: the sampled-query kernel, its square (for the spread across samples) and
  // the actual attention, each summed over the samples
  Eigen::MatrixXd kernel_t = Eigen::MatrixXd::Zero(t, t), kernel_sq_t = Eigen::MatrixXd::Zero(t, t);
  Eigen::MatrixXd attention_t = Eigen::MatrixXd::Zero(t, t);
  Eigen::MatrixXd log_z(out.samples, t);
  std::array<double, 4> energy{};
  double keys90_sum = 0, entropy_sum = 0;
  Eigen::VectorXd row(t), scratch(t);
  // Reused across samples: fresh buffers each time cost more in page faults than the
  // products themselves.
  Eigen::MatrixXd q_cvec(t, dh), k_cvec(t, dh);
  // One block of queries at a time, its three products [key, query] against only the keys
  // it sees, and then its queries: what a block reads stays in cache (whole [T, T]
  // products, made first and read after, went to memory and back).
  const Eigen::Index block = std::min(kQueryBlock, t);
  Eigen::MatrixXd pos_cvec(t, block), cvec_pos(t, block), cvec_cvec(t, block);
  Eigen::MatrixXd q_cvec_relative, k_cvec_relative;  // a sample's context parts of c2p and p2c
  // The whole softmax (issue 36's sinks): the keys the skip leaves out, their logits beside
  // the kept keys' denominator.
  KernelSettings whole = s;
  whole.skip = 0;
  const Eigen::Index first_sink_query = std::max<Eigen::Index>(s.skip, 1);
  double key0_sum = 0, first_keys_sum = 0, self_sum = 0;
  Eigen::VectorXd skipped(std::max<Eigen::Index>(s.skip, 1));
  // Query n's actual logit for key i (both with their context), unscaled and unfinished.
  auto actualDot = [&](Eigen::Index n, Eigen::Index i) {
    double dot = (q_pos.row(n) + q_cvec.row(n)).dot(k_pos.row(i) + k_cvec.row(i));
    if (relative) {
      const auto at = static_cast<std::size_t>(n * t + i);
      if (q_relative.size()) dot += q_relative(n, relative->c2p_row[at]) + q_cvec_relative(n, relative->c2p_row[at]);
      if (k_relative.size()) dot += k_relative(i, relative->p2c_row[at]) + k_cvec_relative(i, relative->p2c_row[at]);
    }
    return dot;
  };
  for (Eigen::Index c = 0; c < out.samples; ++c) {
    q_cvec = p.q_cvec.middleRows(c * t, t);
    k_cvec = p.k_cvec.middleRows(c * t, t);
    if (p.joint) {
      q_sample_scale = p.joint->q_samples.segment(c * t, t);
      k_sample_scale = p.joint->k_samples.segment(c * t, t);
    }
    shapedContext(q_cvec, q_pos_raw, q_pos_shaped, q_sample_shape);
    shapedContext(k_cvec, k_pos_raw, k_pos_shaped, k_sample_shape);
    detail::rotate(q_cvec, rope);
    detail::rotate(k_cvec, rope);
    if (relative) q_cvec_relative = relative->queryDots(q_cvec), k_cvec_relative = relative->keyDots(k_cvec);
    for (Eigen::Index n0 = s.skip; n0 < t; n0 += block) {
      const Eigen::Index width = std::min(block, t - n0);
      const detail::KeyRange seen = detail::blockKeys(n0, width, t, s);
      detail::blockDots(k_cvec, q_pos, n0, width, seen, pos_cvec.leftCols(width));
      detail::blockDots(k_pos, q_cvec, n0, width, seen, cvec_pos.leftCols(width));
      detail::blockDots(k_cvec, q_cvec, n0, width, seen, cvec_cvec.leftCols(width));
      if (relative) {
        relative->add(pos_cvec.block(0, 0, seen.count, width), n0, width, seen, no_dots, k_cvec_relative);
        relative->add(cvec_pos.block(0, 0, seen.count, width), n0, width, seen, q_cvec_relative, no_dots);
      }
      for (Eigen::Index n = n0; n < n0 + width; ++n) {
        const auto keys = detail::keyRange(n, t, s);
        const Eigen::Index at = keys.first - seen.first;  // the keys' first row in the block's products
        const auto pp = pos_pos.col(n).segment(keys.first, keys.count);
        const auto pc = pos_cvec.col(n - n0).segment(at, keys.count), cp = cvec_pos.col(n - n0).segment(at, keys.count),
                   cc = cvec_cvec.col(n - n0).segment(at, keys.count);
        energy[0] += pp.squaredNorm();
        energy[1] += pc.squaredNorm();
        energy[2] += cp.squaredNorm();
        energy[3] += cc.squaredNorm();

        auto logits = row.head(keys.count);
        logits = pp + cp;
        detail::finishLogits(logits, n, keys, scale, s);
        detail::softmaxInPlace(logits, s.positions.sink);
        kernel_t.col(n).segment(keys.first, keys.count) += logits;
        kernel_sq_t.col(n).segment(keys.first, keys.count) += logits.cwiseAbs2();

        logits = pp + pc + cp + cc;
        detail::finishLogits(logits, n, keys, scale, s);
        if (keep_maps && c == 0) {
          const Eigen::Index first = keys.first, count = keys.count;
          out.maps[0].row(n).segment(first, count) = pp.transpose() * scale;
          out.maps[1].row(n).segment(first, count) = pc.transpose() * scale;
          out.maps[2].row(n).segment(first, count) = cp.transpose() * scale;
          out.maps[3].row(n).segment(first, count) = cc.transpose() * scale;
          out.maps[4].row(n).segment(first, count) = logits.transpose();
        }
        const auto softmax = detail::softmaxWithEntropy(logits, s.positions.sink);
        log_z(c, n) = softmax.log_normaliser;
        if (n >= first_sink_query) {
          // The keys before the skip that the query sees, their weights over the whole
          // denominator (the kept keys' and theirs), and the kept keys' weights rescaled.
          const auto all = detail::keyRange(n, t, whole);
          const Eigen::Index extra = std::max<Eigen::Index>(0, keys.first - all.first);
          auto before = skipped.head(extra);
          for (Eigen::Index j = 0; j < extra; ++j) before[j] = actualDot(n, all.first + j);
          detail::finishLogits(before, n, {all.first, extra}, scale, s);
          const double top = extra > 0 ? std::max(softmax.log_normaliser, before.maxCoeff()) : softmax.log_normaliser;
          const double log_whole =
              top + std::log(std::exp(softmax.log_normaliser - top) + (before.array() - top).exp().sum());
          const double kept = std::exp(softmax.log_normaliser - log_whole);  // the kept keys' weights are times this
          const double first_weight = extra > 0 ? std::exp(before[0] - log_whole) : (all.first == 0 ? logits[0] * kept : 0.0);
          key0_sum += all.first == 0 ? first_weight : 0.0;
          first_keys_sum += (before.array() - log_whole).exp().sum();
          self_sum += logits[n - keys.first] * kept;
        }
        if (keep_maps && c == 0) out.maps[5].row(n).segment(keys.first, keys.count) = logits.transpose();
        attention_t.col(n).segment(keys.first, keys.count) += logits;
        entropy_sum += softmax.entropy;
        auto weights = scratch.head(keys.count);
        weights = logits;
        keys90_sum += static_cast<double>(keysHoldingInPlace(weights, 0.9 * weights.sum()));  // of the keys' mass
      }
    }
  }
  const double samples = static_cast<double>(out.samples);
  // Means over the samples where the sums lie ([key, query], contiguous), then turned.
  kernel_t /= samples;
  attention_t /= samples;
  out.kernel = kernel_t.transpose();
  out.attention = attention_t.transpose();
  if (out.samples >= 2) {
    // std over samples from the sums: sqrt(E[K^2] - E[K]^2), clamped against rounding below 0
    kernel_sq_t /= samples;
    const Eigen::MatrixXd spread_t = (kernel_sq_t - kernel_t.cwiseAbs2()).cwiseMax(0.0).cwiseSqrt();
    out.kernel_spread = 0.5 * spread_t.rightCols(t - s.skip).sum() / static_cast<double>(t - s.skip);
  }
  const double queries = static_cast<double>(out.samples * (t - s.skip));
  out.keys90 = keys90_sum / queries;
  out.entropy = entropy_sum / queries;
  const double total = energy[0] + energy[1] + energy[2] + energy[3];
  for (std::size_t i = 0; i < 4; ++i) out.qk_shares[i] = total > 0 ? energy[i] / total : 0;
  out.denominator_cv = denominatorSpread(log_z, s.skip);
  const double sink_queries = samples * static_cast<double>(std::max<Eigen::Index>(0, t - first_sink_query));
  if (sink_queries > 0) {
    out.key0_share = key0_sum / sink_queries;
    out.first_keys_share = s.skip > 0 ? first_keys_sum / sink_queries : std::numeric_limits<double>::quiet_NaN();
    out.self_share = self_sum / sink_queries;
  }
  return out;
}

}  // namespace posgeom::heads
