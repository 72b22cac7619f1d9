#include "head_math.h"

#include <cmath>

namespace posgeom::heads::detail {

Eigen::MatrixXd project(const Eigen::MatrixXd& x, const Eigen::MatrixXd& w, const Eigen::VectorXd* bias, double rope_theta) {
  Eigen::MatrixXd y = x * w.transpose();
  if (bias) y.rowwise() += bias->transpose();
  rotate(y, RotaryTable(y.rows(), y.cols(), rope_theta));
  return y;
}

RotaryTable::RotaryTable(Eigen::Index positions, Eigen::Index head_dim, double rope_theta) {
  if (rope_theta <= 0) return;
  const Eigen::Index half = head_dim / 2;
  cos.resize(positions, half);
  sin.resize(positions, half);
  for (Eigen::Index j = 0; j < half; ++j) {
    const double frequency = std::pow(rope_theta, -2.0 * static_cast<double>(j) / static_cast<double>(head_dim));
    for (Eigen::Index t = 0; t < positions; ++t) {
      const double angle = static_cast<double>(t) * frequency;
      cos(t, j) = std::cos(angle);
      sin(t, j) = std::sin(angle);
    }
  }
}

void rotate(Eigen::Ref<Eigen::MatrixXd> y, const RotaryTable& table) {
  if (table.cos.size() == 0) return;
  const Eigen::Index half = y.cols() / 2;
  for (Eigen::Index j = 0; j < half; ++j)
    for (Eigen::Index t = 0; t < y.rows(); ++t) {
      const double a = y(t, j), b = y(t, j + half), c = table.cos(t, j), s = table.sin(t, j);
      y(t, j) = a * c - b * s;
      y(t, j + half) = b * c + a * s;
    }
}

KeyRange keyRange(Eigen::Index n, Eigen::Index positions, const KernelSettings& s) {
  const Eigen::Index last = s.causal ? n : positions - 1;
  return {s.skip, last - s.skip + 1};
}

Eigen::VectorXd rowLogits(const Eigen::RowVectorXd& dots, Eigen::Index n, const KeyRange& keys, double scale,
                          double alibi_slope) {
  Eigen::VectorXd row = dots.segment(keys.first, keys.count).transpose() * scale;
  addAlibi(row, n, keys, alibi_slope);
  return row;
}

void addAlibi(Eigen::Ref<Eigen::VectorXd> logits, Eigen::Index n, const KeyRange& keys, double alibi_slope) {
  if (alibi_slope == 0) return;
  for (Eigen::Index i = 0; i < keys.count; ++i) logits[i] -= alibi_slope * static_cast<double>(n - (keys.first + i));
}

double softmaxInPlace(Eigen::Ref<Eigen::VectorXd> logits) {
  const double top = logits.maxCoeff();
  logits = (logits.array() - top).exp();
  const double sum = logits.sum();
  logits /= sum;
  return top + std::log(sum);
}

SoftmaxResult softmaxWithEntropy(Eigen::Ref<Eigen::VectorXd> logits) {
  const double top = logits.maxCoeff();
  logits.array() -= top;
  const Eigen::ArrayXd e = logits.array().exp();
  const double sum = e.sum(), shifted_dot = (e * logits.array()).sum();
  logits = e.matrix() / sum;
  const double log_sum = std::log(sum);
  return {top + log_sum, log_sum - shifted_dot / sum};
}

}  // namespace posgeom::heads::detail
