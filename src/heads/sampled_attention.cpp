#include "posgeom/heads/sampled_attention.h"

#include <algorithm>
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

}  // namespace

int64_t keysHolding(Eigen::VectorXd weights, double mass) {
  // Quickselect on the mass instead of a sort: split the candidates around their median
  // weight; the heavier half either holds what is still needed (look inside it) or is
  // all taken (look in the lighter half for the rest). O(T) per query, not O(T log T).
  double need = mass - 1e-12;
  int64_t taken = 0;
  auto first = weights.begin(), last = weights.end();
  while (last - first > 1) {
    const auto mid = first + (last - first) / 2;
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

const std::vector<std::string>& qkMapNames() {
  static const std::vector<std::string> names{"pos_pos", "pos_cvec", "cvec_pos", "cvec_cvec", "total", "attention"};
  return names;
}

SampledAttention sampleAttention(const HeadMaps& head, const Eigen::MatrixXd& means, const Eigen::MatrixXd& samples,
                                 const KernelSettings& s, bool keep_maps) {
  const Eigen::Index t = means.rows();
  const double scale = detail::logitScale(head);
  SampledAttention out;
  out.samples = t > 0 ? samples.rows() / t : 0;
  out.kernel = Eigen::MatrixXd::Zero(t, t);
  if (out.samples == 0 || s.skip >= t) return out;
  if (keep_maps) out.maps.assign(qkMapNames().size(), Eigen::MatrixXd::Zero(t, t));

  // Dot products are kept transposed, [key, query], so that each query's keys are one
  // contiguous column segment.
  const Eigen::MatrixXd q_pos = detail::project(means, head.wq, &head.bq, s.rope_theta);  // [T, dh]
  const Eigen::MatrixXd k_pos = detail::project(means, head.wk, nullptr, s.rope_theta);
  const Eigen::MatrixXd pos_pos = k_pos * q_pos.transpose();
  Eigen::MatrixXd kernel_t = Eigen::MatrixXd::Zero(t, t);  // [key, query]
  Eigen::MatrixXd log_z(out.samples, t);
  std::array<double, 4> energy{};
  double keys90_sum = 0, entropy_sum = 0;
  Eigen::VectorXd row(t);
  // Reused across samples: fresh [T, T] buffers each time cost more in page faults than
  // the products themselves.
  Eigen::MatrixXd cvec(t, means.cols()), pos_cvec(t, t), cvec_pos(t, t), cvec_cvec(t, t);
  for (Eigen::Index c = 0; c < out.samples; ++c) {
    cvec.noalias() = samples.middleRows(c * t, t) - means;
    const Eigen::MatrixXd q_cvec = detail::project(cvec, head.wq, nullptr, s.rope_theta);
    const Eigen::MatrixXd k_cvec = detail::project(cvec, head.wk, nullptr, s.rope_theta);
    pos_cvec.noalias() = k_cvec * q_pos.transpose();
    cvec_pos.noalias() = k_pos * q_cvec.transpose();
    cvec_cvec.noalias() = k_cvec * q_cvec.transpose();
    for (Eigen::Index n = s.skip; n < t; ++n) {
      const auto keys = detail::keyRange(n, t, s);
      auto segment = [&](const Eigen::MatrixXd& dots) { return dots.col(n).segment(keys.first, keys.count); };
      const auto pp = segment(pos_pos), pc = segment(pos_cvec), cp = segment(cvec_pos), cc = segment(cvec_cvec);
      energy[0] += pp.squaredNorm();
      energy[1] += pc.squaredNorm();
      energy[2] += cp.squaredNorm();
      energy[3] += cc.squaredNorm();

      auto logits = row.head(keys.count);
      logits = (pp + cp) * scale;
      detail::addAlibi(logits, n, keys, s.alibi_slope);
      detail::softmaxInPlace(logits);
      kernel_t.col(n).segment(keys.first, keys.count) += logits;

      logits = (pp + pc + cp + cc) * scale;
      detail::addAlibi(logits, n, keys, s.alibi_slope);
      if (keep_maps && c == 0) {
        const Eigen::Index first = keys.first, count = keys.count;
        out.maps[0].row(n).segment(first, count) = pp.transpose() * scale;
        out.maps[1].row(n).segment(first, count) = pc.transpose() * scale;
        out.maps[2].row(n).segment(first, count) = cp.transpose() * scale;
        out.maps[3].row(n).segment(first, count) = cc.transpose() * scale;
        out.maps[4].row(n).segment(first, count) = logits.transpose();
      }
      const auto softmax = detail::softmaxWithEntropy(logits);
      log_z(c, n) = softmax.log_normaliser;
      if (keep_maps && c == 0) out.maps[5].row(n).segment(keys.first, keys.count) = logits.transpose();
      entropy_sum += softmax.entropy;
      keys90_sum += static_cast<double>(keysHolding(logits, 0.9));
    }
  }
  out.kernel = kernel_t.transpose() / static_cast<double>(out.samples);
  const double queries = static_cast<double>(out.samples * (t - s.skip));
  out.keys90 = keys90_sum / queries;
  out.entropy = entropy_sum / queries;
  const double total = energy[0] + energy[1] + energy[2] + energy[3];
  for (std::size_t i = 0; i < 4; ++i) out.qk_shares[i] = total > 0 ? energy[i] / total : 0;
  out.denominator_cv = denominatorSpread(log_z, s.skip);
  return out;
}

}  // namespace posgeom::heads
