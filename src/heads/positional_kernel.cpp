#include "posgeom/heads/positional_kernel.h"

#include <cmath>

#include "head_math.h"

namespace posgeom::heads {

std::vector<double> plainRope(double theta, int64_t rotary_dims) {
  std::vector<double> inverse(static_cast<std::size_t>(rotary_dims / 2));
  for (std::size_t j = 0; j < inverse.size(); ++j)
    inverse[j] = std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(rotary_dims));
  return inverse;
}

Eigen::MatrixXd positionalKernel(const HeadMaps& head, const Eigen::MatrixXd& means, const KernelSettings& s) {
  const Eigen::Index t = means.rows();
  const detail::RotaryTable rope(t, s.rope, s.rope_interleaved);
  const Eigen::MatrixXd q = detail::project(means, head.wq, &head.bq, {head.q_norm, head.norm_eps, head.clip}, rope);  // [T, dh]
  const Eigen::MatrixXd k = detail::project(means, head.wk, head.bk.size() > 0 ? &head.bk : nullptr,
                                            {head.k_norm, head.norm_eps, head.clip}, rope);
  const Eigen::MatrixXd logits = q * k.transpose();
  Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(t, t);
  for (Eigen::Index n = s.skip; n < t; ++n) {
    const auto keys = detail::keyRange(n, t, s);
    Eigen::VectorXd row = logits.row(n).segment(keys.first, keys.count).transpose();
    detail::finishLogits(row, n, keys, detail::logitScale(head, s), s);
    detail::softmaxInPlace(row);
    kernel.row(n).segment(keys.first, keys.count) = row.transpose();
  }
  return kernel;
}

Eigen::VectorXd effectiveTokenCount(const Eigen::MatrixXd& kernel) {
  Eigen::VectorXd etc(kernel.rows());
  for (Eigen::Index n = 0; n < kernel.rows(); ++n) {
    const double sq = kernel.row(n).squaredNorm();
    etc[n] = sq > 0 ? 1.0 / sq : 0.0;
  }
  return etc;
}

int64_t window90(const Eigen::MatrixXd& kernel, Eigen::Index n) {
  for (Eigen::Index w = 0; w < kernel.cols(); ++w) {
    const Eigen::Index lo = std::max<Eigen::Index>(0, n - w), hi = std::min<Eigen::Index>(kernel.cols() - 1, n + w);
    if (kernel.row(n).segment(lo, hi - lo + 1).sum() >= 0.9 - 1e-12) return w;
  }
  return kernel.cols();
}

std::string classify(double etc, int64_t keys, const ClassThresholds& t) {
  const double share = keys > 0 ? etc / static_cast<double>(keys) : 0;
  if (share < t.local) return "local";
  if (share > t.uniform) return "uniform";
  return "slow-decay";
}

}  // namespace posgeom::heads
