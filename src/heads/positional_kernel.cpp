#include "posgeom/heads/positional_kernel.h"

#include <cmath>
#include <limits>
#include <vector>

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
  const auto rope = detail::RotaryTable::of(t, s.positions.rope);
  Eigen::VectorXd q_scale, k_scale;  // OLMo-2's norms over all heads
  if (head.joint) {
    q_scale = detail::jointInverseRms(means, head.joint->wq, head.joint->bq, head.norm_eps);
    k_scale = detail::jointInverseRms(means, head.joint->wk, head.joint->bk, head.norm_eps);
  }
  const Eigen::MatrixXd q = detail::project(means, head.wq, &head.bq, detail::queryShape(head, &q_scale), rope);  // [T, dh]
  const Eigen::MatrixXd k =
      detail::project(means, head.wk, head.bk.size() > 0 ? &head.bk : nullptr, detail::keyShape(head, &k_scale), rope);
  Eigen::MatrixXd dots = k * q.transpose();  // [key, query]
  if (const auto relative = detail::RelativeTerms::of(t, s))
    relative->add(dots, 0, t, {0, t}, relative->queryDots(q), relative->keyDots(k));
  return detail::kernelFromDots(dots, detail::logitScale(head, s), s);
}

Eigen::VectorXd effectiveTokenCount(const Eigen::MatrixXd& kernel) {
  // Row sums down the columns: the matrix is stored by column. (sum K)^2 / sum K^2: 1 / sum K^2
  // for a row summing to one, and the same of the row renormalised where a sink took a share.
  const Eigen::VectorXd squares = kernel.cwiseAbs2().rowwise().sum();
  const Eigen::VectorXd sums = kernel.rowwise().sum();
  return squares.binaryExpr(sums, [](double sq, double sum) { return sq > 0 ? sum * sum / sq : 0.0; });
}

int64_t window90(const Eigen::MatrixXd& kernel, Eigen::Index n) {
  for (Eigen::Index w = 0; w < kernel.cols(); ++w) {
    const Eigen::Index lo = std::max<Eigen::Index>(0, n - w), hi = std::min<Eigen::Index>(kernel.cols() - 1, n + w);
    if (kernel.row(n).segment(lo, hi - lo + 1).sum() >= 0.9 * kernel.row(n).sum() - 1e-12) return w;  // of the keys' mass
  }
  return kernel.cols();
}

double translationEquivarianceTv(const Eigen::MatrixXd& kernel, const KernelSettings& settings) {
  const Eigen::Index t = kernel.rows();
  if (t == 0 || settings.skip >= t) return std::numeric_limits<double>::quiet_NaN();
  const Eigen::Index depth = std::max<Eigen::Index>(1, detail::keyRange(t - 1, t, settings).count / 2);
  const Eigen::Index lo = settings.positions.mask.causal ? 0 : -(depth - 1), hi = depth - 1;
  std::vector<Eigen::VectorXd> profiles;  // of the queries whose keys cover every offset, in order
  for (Eigen::Index n = settings.skip; n < t; ++n) {
    const auto keys = detail::keyRange(n, t, settings);
    if (n - hi < keys.first || n - lo > keys.first + keys.count - 1) continue;
    Eigen::VectorXd p(hi - lo + 1);
    for (Eigen::Index delta = lo; delta <= hi; ++delta) p[delta - lo] = kernel(n, n - delta);
    const double mass = p.sum();
    if (mass > 0) profiles.push_back(p / mass);
  }
  if (profiles.size() < 2) return std::numeric_limits<double>::quiet_NaN();
  double total = 0;
  for (std::size_t i = 0; i + 1 < profiles.size(); ++i) total += 0.5 * (profiles[i] - profiles.back()).cwiseAbs().sum();
  return total / static_cast<double>(profiles.size() - 1);
}

double meanRowTv(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::Index first_query) {
  if (first_query >= a.rows()) return std::numeric_limits<double>::quiet_NaN();
  const Eigen::Index queries = a.rows() - first_query;  // by column: the matrices are stored so
  return 0.5 * (a.bottomRows(queries) - b.bottomRows(queries)).cwiseAbs().sum() / static_cast<double>(queries);
}

std::string classify(double etc, int64_t keys, const ClassThresholds& t) {
  const double share = keys > 0 ? etc / static_cast<double>(keys) : 0;
  if (share < t.local) return "local";
  if (share > t.uniform) return "uniform";
  return "slow-decay";
}

}  // namespace posgeom::heads
