#include "posgeom/heads/rope_bands.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "head_math.h"

namespace posgeom::heads {
namespace {

constexpr double kTwoPi = 6.283185307179586;

// The head's dims in band order: pair j's two dims side by side (columns 2j and 2j + 1),
// then the unturned dims. A dot product does not change when both sides' columns move alike.
std::vector<Eigen::Index> bandOrder(Eigen::Index pairs, Eigen::Index dh, bool interleaved) {
  std::vector<Eigen::Index> order;
  for (Eigen::Index j = 0; j < pairs; ++j) {
    order.push_back(interleaved ? 2 * j : j);
    order.push_back(interleaved ? 2 * j + 1 : j + pairs);
  }
  for (Eigen::Index d = 2 * pairs; d < dh; ++d) order.push_back(d);
  return order;
}

// Where each band's columns start in that order, and the end: bands.size() + 1 entries.
std::vector<Eigen::Index> bandColumns(const std::vector<RopeBand>& bands) {
  std::vector<Eigen::Index> starts{0};
  for (const auto& b : bands) starts.push_back(starts.back() + b.dims);
  return starts;
}

// A head's q and k as its logits take them (bias, the head's norms, RoPE), in band order:
// the mean embedding's rows, and each sample's on request.
class TurnedRows {
 public:
  TurnedRows(const HeadMaps& head, const HeadProjections& p, const KernelSettings& s)
      : head_(head), p_(p), rope_(detail::RotaryTable::of(p.q_means.rows(), s.positions.rope)),
        order_(bandOrder(static_cast<Eigen::Index>(s.positions.rope.inverse_frequencies.size()), p.q_means.cols(),
                         s.positions.rope.interleaved())) {
    q_raw_ = p.q_means;
    q_raw_.rowwise() += head.bq.transpose();
    k_raw_ = p.k_means;
    if (head.bk.size() > 0) k_raw_.rowwise() += head.bk.transpose();
    q_mean = turned(q_raw_, detail::queryShape(head, p.joint ? &p.joint->q_means : nullptr));
    k_mean = turned(k_raw_, detail::keyShape(head, p.joint ? &p.joint->k_means : nullptr));
  }
  // Sample c's rows: x = P + cvec, so its raw projection is the mean's plus the context's.
  void sample(Eigen::Index c, Eigen::MatrixXd& q, Eigen::MatrixXd& k) {
    const Eigen::Index t = q_raw_.rows();
    if (p_.joint) {
      q_scale_ = p_.joint->q_samples.segment(c * t, t);
      k_scale_ = p_.joint->k_samples.segment(c * t, t);
    }
    q = turned(q_raw_ + p_.q_cvec.middleRows(c * t, t), detail::queryShape(head_, p_.joint ? &q_scale_ : nullptr));
    k = turned(k_raw_ + p_.k_cvec.middleRows(c * t, t), detail::keyShape(head_, p_.joint ? &k_scale_ : nullptr));
  }
  Eigen::MatrixXd q_mean, k_mean;

 private:
  Eigen::MatrixXd turned(Eigen::MatrixXd rows, const detail::ProjectionShape& shape) const {
    detail::shapeRows(rows, shape);
    detail::rotate(rows, rope_);
    Eigen::MatrixXd ordered(rows.rows(), rows.cols());
    for (std::size_t c = 0; c < order_.size(); ++c) ordered.col(static_cast<Eigen::Index>(c)) = rows.col(order_[c]);
    return ordered;
  }
  const HeadMaps& head_;
  const HeadProjections& p_;
  detail::RotaryTable rope_;
  std::vector<Eigen::Index> order_;
  Eigen::MatrixXd q_raw_, k_raw_;
  Eigen::VectorXd q_scale_, k_scale_;
};

// Adds to energy[b] band b's part of the logits of queries `q` against keys `k` ([T, dh] in
// band order), squared about each query's mean over the keys it sees (a part the same for
// every key moves no attention), summed over the queries from the skip on. Over m keys,
// sum_i (q_b . k_i)^2 - (sum_i q_b . k_i)^2 / m = q_b^T G_b q_b - (q_b . s_b)^2 / m with G_b the
// keys' Gram matrix and s_b their sum, kept as running sums while the key range slides
// forward: w^2 work per query and band, and per key entering or leaving (w the band's width),
// instead of forming every logit (measured in the README: 0.35 of the sampled attention's time, against 1.0).
// `raw` gathers the same parts squared about zero: what the centred sums are measured against.
// Several query matrices against the same keys (every sample's queries against the mean keys)
// share one pass over the keys' running sums.
void addBandEnergy(const Eigen::MatrixXd& k, const std::vector<const Eigen::MatrixXd*>& queries,
                   const std::vector<Eigen::Index>& columns, const KernelSettings& s, Eigen::VectorXd& energy, double& raw) {
  const Eigen::Index t = k.rows();
  std::vector<Eigen::MatrixXd> gram;
  std::vector<Eigen::RowVectorXd> sum;
  for (std::size_t b = 0; b + 1 < columns.size(); ++b) {
    const Eigen::Index w = columns[b + 1] - columns[b];
    gram.push_back(Eigen::MatrixXd::Zero(w, w));
    sum.push_back(Eigen::RowVectorXd::Zero(w));
  }
  auto update = [&](Eigen::Index i, double sign) {
    for (std::size_t b = 0; b < gram.size(); ++b) {
      const auto row = k.row(i).segment(columns[b], gram[b].rows());
      gram[b].noalias() += sign * row.transpose() * row;
      sum[b] += sign * row;
    }
  };
  // The keys in the sums: [first, end). Both ends only move forward as the query does.
  Eigen::Index first = detail::keyRange(s.skip, t, s).first, end = first;
  for (Eigen::Index n = s.skip; n < t; ++n) {
    const auto keys = detail::keyRange(n, t, s);
    for (; end < keys.first + keys.count; ++end) update(end, 1.0);
    for (; first < keys.first; ++first) update(first, -1.0);
    if (keys.count < 2) continue;  // one key: nothing varies, whatever rounding says
    for (const auto* q : queries)
      for (std::size_t b = 0; b < gram.size(); ++b) {
        const auto row = q->row(n).segment(columns[b], gram[b].rows());
        const double total = row.dot(sum[b]), squares = (row * gram[b]).dot(row);
        // Rounding can leave a key-constant part a hair below zero.
        energy[static_cast<Eigen::Index>(b)] += std::max(0.0, squares - total * total / static_cast<double>(keys.count));
        raw += squares;
      }
  }
}

// The kernel [query, key] of queries `q` against keys `k` from columns [c0, c1) alone.
Eigen::MatrixXd columnsKernel(const Eigen::MatrixXd& k, const Eigen::MatrixXd& q, Eigen::Index c0, Eigen::Index c1,
                              double scale, const KernelSettings& s) {
  const Eigen::MatrixXd dots = k.middleCols(c0, c1 - c0) * q.middleCols(c0, c1 - c0).transpose();  // [key, query]
  return detail::kernelFromDots(dots, scale, s);
}

// The last query's row of that kernel added to `row` [T] (its ETC is all the report takes).
void addLastRow(const Eigen::MatrixXd& k, const Eigen::MatrixXd& q, Eigen::Index c0, Eigen::Index c1, double scale,
                const KernelSettings& s, Eigen::VectorXd& row) {
  const Eigen::Index last = q.rows() - 1;
  const auto keys = detail::keyRange(last, q.rows(), s);
  Eigen::VectorXd logits = k.block(keys.first, c0, keys.count, c1 - c0) * q.row(last).segment(c0, c1 - c0).transpose();
  detail::finishLogits(logits, last, keys, scale, s);
  detail::softmaxInPlace(logits, s.positions.sink);
  row.segment(keys.first, keys.count) += logits;
}

// ETC of one kernel row: (sum K)^2 / sum K^2, as effectiveTokenCount's.
double rowEtc(const Eigen::VectorXd& row) {
  const double squares = row.squaredNorm();
  return squares > 0 ? row.sum() * row.sum() / squares : 0.0;
}

// Each band's share, or NaN where the logits do not vary over the keys beyond rounding (a
// millionth of their size about zero, measured in double): no share is anyone's there.
Eigen::VectorXd shares(const Eigen::VectorXd& energy, double raw) {
  const double total = energy.sum();
  if (!(total > 1e-12 * raw)) return Eigen::VectorXd::Constant(energy.size(), std::numeric_limits<double>::quiet_NaN());
  return energy / total;
}

std::string massOf(const Eigen::VectorXd& share, Eigen::Index turning, bool unturned) {
  if (share.hasNaN()) return "";
  if (unturned && share[turning] > kRopeMassAbove) return "unturned";
  const Eigen::Index half = turning / 2;  // an odd count's middle band belongs to neither half
  if (half > 0 && share.head(half).sum() > kRopeMassAbove) return "high";
  if (half > 0 && share.segment(turning - half, half).sum() > kRopeMassAbove) return "low";
  return "spread";
}

// Mean over rows of each turning pair's norm (columns 2j, 2j + 1), and of the unturned dims'.
void pairNorms(const Eigen::MatrixXd& rows, Eigen::Index pairs, Eigen::VectorXd& pair_norm, double& unturned_norm,
               Eigen::Index& counted) {
  for (Eigen::Index j = 0; j < pairs; ++j) pair_norm[j] += rows.middleCols(2 * j, 2).rowwise().norm().sum();
  if (rows.cols() > 2 * pairs) unturned_norm += rows.rightCols(rows.cols() - 2 * pairs).rowwise().norm().sum();
  counted += rows.rows();
}

}  // namespace

std::vector<RopeBand> ropeBandsOf(const std::vector<double>& inverse_frequencies, int64_t head_dim) {
  std::vector<RopeBand> bands;
  const auto pairs = static_cast<int64_t>(inverse_frequencies.size());
  if (pairs == 0) return bands;
  const int64_t count = std::min(kRopeBands, pairs);
  for (int64_t b = 0; b < count; ++b) {
    RopeBand band;
    band.first_pair = b * pairs / count;
    band.pairs = (b + 1) * pairs / count - band.first_pair;
    band.dims = 2 * band.pairs;
    const auto first = inverse_frequencies.begin() + band.first_pair, end = first + band.pairs;
    band.shortest_wavelength = kTwoPi / *std::max_element(first, end);
    band.longest_wavelength = kTwoPi / *std::min_element(first, end);
    bands.push_back(band);
  }
  if (head_dim > 2 * pairs) bands.push_back({0, 0, head_dim - 2 * pairs});
  return bands;
}

Eigen::MatrixXd bandKernel(const HeadMaps& head, const HeadProjections& p, const KernelSettings& s, bool mean_query,
                           int64_t first_band, int64_t end_band) {
  const Eigen::Index t = p.q_means.rows();
  const auto columns = bandColumns(ropeBandsOf(s.positions.rope.inverse_frequencies, p.q_means.cols()));
  const Eigen::Index c0 = columns.at(static_cast<std::size_t>(first_band)), c1 = columns.at(static_cast<std::size_t>(end_band));
  const double scale = detail::logitScale(head, s);
  TurnedRows rows(head, p, s);
  const Eigen::Index samples = t > 0 ? p.q_cvec.rows() / t : 0;
  if (mean_query || samples == 0) return columnsKernel(rows.k_mean, rows.q_mean, c0, c1, scale, s);
  Eigen::MatrixXd kernel = Eigen::MatrixXd::Zero(t, t), q, k;
  for (Eigen::Index c = 0; c < samples; ++c) {
    rows.sample(c, q, k);
    kernel += columnsKernel(rows.k_mean, q, c0, c1, scale, s);
  }
  return kernel / static_cast<double>(samples);
}

std::optional<RopeBandReport> ropeBands(const HeadMaps& head, const HeadProjections& p, const KernelSettings& s, bool mean_query) {
  const auto& frequencies = s.positions.rope.inverse_frequencies;
  const Eigen::Index t = p.q_means.rows(), dh = p.q_means.cols();
  if (frequencies.empty() || s.skip >= t) return std::nullopt;
  RopeBandReport r;
  r.bands = ropeBandsOf(frequencies, dh);
  const auto pairs = static_cast<Eigen::Index>(frequencies.size());
  r.unturned_band = dh > 2 * pairs;
  const auto turning = static_cast<Eigen::Index>(r.bands.size()) - (r.unturned_band ? 1 : 0);
  const auto columns = bandColumns(r.bands);
  const auto band_count = static_cast<Eigen::Index>(r.bands.size());
  const double scale = detail::logitScale(head, s);
  const Eigen::Index samples = t > 0 ? p.q_cvec.rows() / t : 0;
  mean_query = mean_query || samples == 0;

  TurnedRows rows(head, p, s);
  Eigen::VectorXd attention = Eigen::VectorXd::Zero(band_count), kernel = Eigen::VectorXd::Zero(band_count);
  double attention_raw = 0, kernel_raw = 0;
  Eigen::VectorXd q_norm = Eigen::VectorXd::Zero(pairs), k_norm = Eigen::VectorXd::Zero(pairs);
  double q_unturned = 0, k_unturned = 0;
  Eigen::Index q_rows = 0, k_rows = 0;
  Eigen::VectorXd highest = Eigen::VectorXd::Zero(t), lowest = Eigen::VectorXd::Zero(t);  // the last query's kernel rows
  const Eigen::Index first_turning_end = columns[1], last_turning = columns[static_cast<std::size_t>(turning - 1)],
                     last_turning_end = columns[static_cast<std::size_t>(turning)];
  // The kernel's queries (the mean embedding's, or every sample's), all against the mean keys.
  std::vector<Eigen::MatrixXd> sample_queries;
  auto addLastRows = [&](const Eigen::MatrixXd& q) {
    addLastRow(rows.k_mean, q, 0, first_turning_end, scale, s, highest);
    addLastRow(rows.k_mean, q, last_turning, last_turning_end, scale, s, lowest);
  };
  const Eigen::Index from = s.skip, kept = t - s.skip;
  if (mean_query) addLastRows(rows.q_mean);
  if (samples == 0) {
    pairNorms(rows.q_mean.bottomRows(kept), pairs, q_norm, q_unturned, q_rows);
    pairNorms(rows.k_mean.bottomRows(kept), pairs, k_norm, k_unturned, k_rows);
  }
  Eigen::MatrixXd q, k;
  for (Eigen::Index c = 0; c < samples; ++c) {
    rows.sample(c, q, k);
    addBandEnergy(k, {&q}, columns, s, attention, attention_raw);
    if (!mean_query) addLastRows(q), sample_queries.push_back(q);
    pairNorms(q.bottomRows(t - from), pairs, q_norm, q_unturned, q_rows);
    pairNorms(k.bottomRows(t - from), pairs, k_norm, k_unturned, k_rows);
  }
  std::vector<const Eigen::MatrixXd*> kernel_queries{&rows.q_mean};
  if (!mean_query) {
    kernel_queries.clear();
    for (const auto& q_sample : sample_queries) kernel_queries.push_back(&q_sample);
  }
  addBandEnergy(rows.k_mean, kernel_queries, columns, s, kernel, kernel_raw);
  r.kernel_share = shares(kernel, kernel_raw);
  r.kernel_mass = massOf(r.kernel_share, turning, r.unturned_band);
  if (samples > 0) {
    r.attention_share = shares(attention, attention_raw);
    r.attention_mass = massOf(r.attention_share, turning, r.unturned_band);
  } else {
    r.attention_share = Eigen::VectorXd::Constant(band_count, std::numeric_limits<double>::quiet_NaN());
  }
  r.q_pair_norm = q_norm / static_cast<double>(q_rows);
  r.k_pair_norm = k_norm / static_cast<double>(k_rows);
  if (r.unturned_band) {
    r.q_unturned_norm = q_unturned / static_cast<double>(q_rows);
    r.k_unturned_norm = k_unturned / static_cast<double>(k_rows);
  }
  r.etc_highest_band = rowEtc(highest);  // a row's ETC does not change with its scale: the sum over samples will do
  r.etc_lowest_band = rowEtc(lowest);
  return r;
}

}  // namespace posgeom::heads
