#include "posgeom/heads/positional_kernel.h"

#include <cmath>

namespace posgeom::heads {
namespace {

// Rotates x [dh] to position `pos`: pairs (j, j + dh/2) turn by pos * theta^(-2j/dh).
Eigen::VectorXd rotate(const Eigen::VectorXd& x, int64_t pos, double theta) {
  const Eigen::Index half = x.size() / 2;
  Eigen::VectorXd out(x.size());
  for (Eigen::Index j = 0; j < half; ++j) {
    const double angle = static_cast<double>(pos) * std::pow(theta, -2.0 * static_cast<double>(j) / static_cast<double>(x.size()));
    const double c = std::cos(angle), s = std::sin(angle);
    out[j] = x[j] * c - x[j + half] * s;
    out[j + half] = x[j + half] * c + x[j] * s;
  }
  return out;
}

}  // namespace

Eigen::MatrixXd positionalKernel(const HeadMaps& head, const Eigen::MatrixXd& means, const KernelSettings& s) {
  const Eigen::Index t = means.rows();
  const double scale = 1.0 / std::sqrt(static_cast<double>(head.wq.rows()));
  Eigen::MatrixXd q = (means * head.wq.transpose()).rowwise() + head.bq.transpose();  // [T, dh]
  Eigen::MatrixXd k = means * head.wk.transpose();
  if (s.rope_theta > 0)
    for (Eigen::Index i = 0; i < t; ++i) {
      q.row(i) = rotate(q.row(i).transpose(), i, s.rope_theta).transpose();
      k.row(i) = rotate(k.row(i).transpose(), i, s.rope_theta).transpose();
    }
  Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(t, t);
  for (Eigen::Index n = s.skip; n < t; ++n) {
    const Eigen::Index last = s.causal ? n : t - 1;
    const Eigen::Index count = last - s.skip + 1;
    Eigen::VectorXd logits = k.middleRows(s.skip, count) * q.row(n).transpose() * scale;
    for (Eigen::Index i = 0; i < count; ++i) logits[i] -= s.alibi_slope * static_cast<double>(n - (s.skip + i));
    logits.array() -= logits.maxCoeff();
    const Eigen::VectorXd e = logits.array().exp();
    kernel.row(n).segment(s.skip, count) = (e / e.sum()).transpose();
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

HeadKernel analyzeHead(const HeadMaps& head, const Eigen::MatrixXd& means, const KernelSettings& settings,
                       const ClassThresholds& thresholds) {
  const Eigen::MatrixXd kernel = positionalKernel(head, means, settings);
  const Eigen::Index last = kernel.rows() - 1;
  HeadKernel h;
  h.etc_curve = effectiveTokenCount(kernel);
  h.etc = h.etc_curve[last];
  h.keys = settings.causal ? last - settings.skip + 1 : kernel.cols() - settings.skip;
  h.window90 = window90(kernel, last);
  h.kind = classify(h.etc, h.keys, thresholds);
  h.profile = kernel.row(last).transpose();
  return h;
}

}  // namespace posgeom::heads
