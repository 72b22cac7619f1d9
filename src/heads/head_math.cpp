#include "head_math.h"

#include <algorithm>
#include <cmath>

namespace posgeom::heads::detail {

RotaryTable::RotaryTable(Eigen::Index positions, const std::vector<double>& inverse_frequencies, bool interleaved_pairs,
                         double scale)
    : interleaved(interleaved_pairs) {
  if (inverse_frequencies.empty()) return;
  const auto pairs = static_cast<Eigen::Index>(inverse_frequencies.size());
  cos.resize(positions, pairs);
  sin.resize(positions, pairs);
  for (Eigen::Index j = 0; j < pairs; ++j)
    for (Eigen::Index t = 0; t < positions; ++t) {
      const double angle = static_cast<double>(t) * inverse_frequencies[static_cast<std::size_t>(j)];
      cos(t, j) = std::cos(angle) * scale;
      sin(t, j) = std::sin(angle) * scale;
    }
}

void rotate(Eigen::Ref<Eigen::MatrixXd> y, const RotaryTable& table) {
  const Eigen::Index half = table.cos.cols();
  for (Eigen::Index j = 0; j < half; ++j) {
    const Eigen::Index first = table.interleaved ? 2 * j : j, second = table.interleaved ? 2 * j + 1 : j + half;
    for (Eigen::Index t = 0; t < y.rows(); ++t) {
      const double a = y(t, first), b = y(t, second), c = table.cos(t, j), s = table.sin(t, j);
      y(t, first) = a * c - b * s;
      y(t, second) = b * c + a * s;
    }
  }
}

void normRows(Eigen::Ref<Eigen::MatrixXd> y, const Eigen::VectorXd& weights, double eps) {
  if (weights.size() == 0) return;
  for (Eigen::Index t = 0; t < y.rows(); ++t) {
    const double inverse_rms = 1.0 / std::sqrt(y.row(t).squaredNorm() / static_cast<double>(y.cols()) + eps);
    y.row(t) = (y.row(t).array() * inverse_rms * weights.transpose().array()).matrix();
  }
}

void shapeRows(Eigen::Ref<Eigen::MatrixXd> y, const ProjectionShape& shape) {
  if (shape.clip > 0) y = y.cwiseMax(-shape.clip).cwiseMin(shape.clip);
  if (!shape.row_scale) return normRows(y, shape.norm, shape.eps);
  auto scaled = y.rightCols(y.cols() - shape.unscaled);
  scaled = shape.row_scale->asDiagonal() * scaled;
  if (shape.norm.size() > 0) y.array().rowwise() *= shape.norm.transpose().array();
}

Eigen::VectorXd jointInverseRms(const Eigen::MatrixXd& x, const Eigen::MatrixXd& w, const Eigen::VectorXd& b, double eps) {
  if (w.rows() == 0) return Eigen::VectorXd::Ones(x.rows());
  Eigen::MatrixXd y = x * w.transpose();
  if (b.size() > 0) y.rowwise() += b.transpose();
  const Eigen::VectorXd mean_square = y.rowwise().squaredNorm() / static_cast<double>(y.cols());
  return (mean_square.array() + eps).rsqrt().matrix();
}

Eigen::MatrixXd project(const Eigen::MatrixXd& x, const Eigen::MatrixXd& w, const Eigen::VectorXd* bias,
                        const ProjectionShape& shape, const RotaryTable& table) {
  Eigen::MatrixXd y = x * w.transpose();
  if (bias) y.rowwise() += bias->transpose();
  shapeRows(y, shape);
  rotate(y, table);
  return y;
}

KeyRange keyRange(Eigen::Index n, Eigen::Index positions, const KernelSettings& s) {
  const auto& mask = s.positions.mask;
  const Eigen::Index last =
      mask.causal ? n : (mask.window > 0 ? std::min<Eigen::Index>(positions - 1, n + mask.window - 1) : positions - 1);
  const Eigen::Index first =
      mask.window > 0 ? std::max<Eigen::Index>(s.skip, n - mask.window + 1) : s.skip;
  return {first, last - first + 1};
}

void finishLogits(Eigen::Ref<Eigen::VectorXd> logits, Eigen::Index n, const KeyRange& keys, double scale,
                  const KernelSettings& s) {
  logits *= scale;
  const double cap = s.positions.logit_cap;
  if (cap > 0) logits = (logits.array() / cap).tanh() * cap;
  const auto& term = s.positions.additive;
  if (term.none()) return;
  for (Eigen::Index i = 0; i < keys.count; ++i) logits[i] += term.at(n - (keys.first + i));
}

KeyRange blockKeys(Eigen::Index n0, Eigen::Index width, Eigen::Index positions, const KernelSettings& s) {
  // A window's first key moves with the query; a block's last key is its last query's.
  const Eigen::Index first = keyRange(n0, positions, s).first;
  const auto last = keyRange(n0 + width - 1, positions, s);
  const Eigen::Index end = s.positions.mask.causal ? n0 + width : last.first + last.count;
  return {first, end - first};
}

void blockDots(const Eigen::MatrixXd& keys, const Eigen::MatrixXd& queries, Eigen::Index n0, Eigen::Index width,
               const KeyRange& seen, Eigen::Ref<Eigen::MatrixXd> out) {
  out.topRows(seen.count).noalias() = keys.middleRows(seen.first, seen.count) * queries.middleRows(n0, width).transpose();
}

std::optional<RelativeTerms> RelativeTerms::of(Eigen::Index positions, const KernelSettings& settings) {
  const auto& v = settings.positions.relative_vectors;
  if (!v) return std::nullopt;
  RelativeTerms r;
  const auto rows = static_cast<Eigen::Index>(2 * v->rows.span), dims = static_cast<Eigen::Index>(v->dims);
  auto table = [&](const std::vector<double>& values) {
    return values.empty() ? Eigen::MatrixXd() : Eigen::MatrixXd(Eigen::Map<const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>>(values.data(), rows, dims));
  };
  r.keys = table(v->keys);
  r.queries = table(v->queries);
  r.positions = positions;
  auto tables = v->rows.tables(positions);
  r.c2p_row = std::move(tables.c2p);
  r.p2c_row = std::move(tables.p2c);
  return r;
}

Eigen::MatrixXd RelativeTerms::queryDots(const Eigen::MatrixXd& q) const {
  return keys.size() ? Eigen::MatrixXd(q * keys.transpose()) : Eigen::MatrixXd();
}

Eigen::MatrixXd RelativeTerms::keyDots(const Eigen::MatrixXd& k) const {
  return queries.size() ? Eigen::MatrixXd(k * queries.transpose()) : Eigen::MatrixXd();
}

void RelativeTerms::add(Eigen::Ref<Eigen::MatrixXd> dots, Eigen::Index n0, Eigen::Index width, const KeyRange& seen,
                        const Eigen::MatrixXd& query_dots, const Eigen::MatrixXd& key_dots) const {
  for (Eigen::Index n = n0; n < n0 + width; ++n)
    for (Eigen::Index i = seen.first; i < seen.first + seen.count; ++i) {
      const auto at = static_cast<std::size_t>(n * positions + i);
      double term = 0;
      if (query_dots.size()) term += query_dots(n, c2p_row[at]);
      if (key_dots.size()) term += key_dots(i, p2c_row[at]);
      dots(i - seen.first, n - n0) += term;
    }
}

Eigen::MatrixXd kernelFromDots(const Eigen::MatrixXd& dots, double scale, const KernelSettings& s) {
  const Eigen::Index t = dots.cols();
  Eigen::MatrixXd kernel_t = Eigen::MatrixXd::Zero(t, t);  // [key, query]: each query's keys contiguous
  Eigen::VectorXd row(t);
  for (Eigen::Index n = s.skip; n < t; ++n) {
    const auto keys = keyRange(n, t, s);
    auto logits = row.head(keys.count);
    logits = dots.col(n).segment(keys.first, keys.count);
    finishLogits(logits, n, keys, scale, s);
    softmaxInPlace(logits, s.positions.sink);
    kernel_t.col(n).segment(keys.first, keys.count) = logits;
  }
  return kernel_t.transpose();
}

double softmaxInPlace(Eigen::Ref<Eigen::VectorXd> logits, std::optional<double> sink) {
  const double top = sink ? std::max(logits.maxCoeff(), *sink) : logits.maxCoeff();
  logits = (logits.array() - top).exp();
  const double sum = logits.sum() + (sink ? std::exp(*sink - top) : 0.0);
  logits /= sum;
  return top + std::log(sum);
}

SoftmaxResult softmaxWithEntropy(Eigen::Ref<Eigen::VectorXd> logits, std::optional<double> sink) {
  const double top = logits.maxCoeff();
  logits.array() -= top;
  const Eigen::ArrayXd e = logits.array().exp();
  const double sum = e.sum(), shifted_dot = (e * logits.array()).sum();
  const double log_sum = std::log(sum);
  // The keys' entropy among themselves; the weights and the normaliser with the sink's share.
  const double denominator = sink ? sum + std::exp(*sink - top) : sum;
  logits = e.matrix() / denominator;
  return {top + std::log(denominator), log_sum - shifted_dot / sum};
}

}  // namespace posgeom::heads::detail
