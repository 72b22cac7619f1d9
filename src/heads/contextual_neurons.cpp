#include "posgeom/heads/contextual_neurons.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <thread>

#include "posgeom/base/parallel.h"

namespace posgeom::heads {
namespace {

// The `k` largest values seen, with their ids, smallest first.
class TopK {
 public:
  explicit TopK(std::size_t k) : k_(k) {}
  void offer(double value, int32_t id) {
    if (best_.size() == k_ && value <= best_.front().first) return;
    if (best_.size() == k_) best_.erase(best_.begin());
    best_.insert(std::lower_bound(best_.begin(), best_.end(), std::make_pair(value, id)), {value, id});
  }
  // Largest first, each value less `shift`, and negated back when `negate`.
  std::vector<std::pair<int32_t, double>> take(double shift, bool negate) const {
    std::vector<std::pair<int32_t, double>> out;
    for (auto it = best_.rbegin(); it != best_.rend(); ++it) out.emplace_back(it->second, (negate ? -it->first : it->first) - shift);
    return out;
  }

 private:
  std::size_t k_;
  std::vector<std::pair<double, int32_t>> best_;
};

// Single linkage: heads join when their kernels are at least `threshold` alike.
std::vector<HeadGroup> groupHeads(const std::vector<int64_t>& heads, const std::vector<HeadReport>& reports, double threshold,
                                  int64_t skip) {
  const std::size_t n = heads.size();
  Eigen::MatrixXd similarity = Eigen::MatrixXd::Ones(static_cast<Eigen::Index>(n), static_cast<Eigen::Index>(n));
  std::vector<std::size_t> root(n);
  std::iota(root.begin(), root.end(), 0);
  const auto find = [&root](std::size_t i) {
    while (root[i] != i) i = root[i] = root[root[i]];
    return i;
  };
  for (std::size_t a = 0; a < n; ++a)
    for (std::size_t b = a + 1; b < n; ++b) {
      const double s = kernelSimilarity(reports[static_cast<std::size_t>(heads[a])].kernel,
                                        reports[static_cast<std::size_t>(heads[b])].kernel, skip);
      similarity(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)) = similarity(static_cast<Eigen::Index>(b), static_cast<Eigen::Index>(a)) = s;
      if (s >= threshold) root[find(a)] = find(b);
    }
  std::vector<HeadGroup> groups;
  std::vector<std::size_t> group_of(n, n);
  for (std::size_t a = 0; a < n; ++a) {
    const std::size_t r = find(a);
    if (group_of[r] == n) group_of[r] = groups.size(), groups.emplace_back();
    auto& g = groups[group_of[r]];
    for (const auto other : g.heads) {
      const auto b = static_cast<std::size_t>(std::find(heads.begin(), heads.end(), other) - heads.begin());
      g.min_similarity = std::min(g.min_similarity, similarity(static_cast<Eigen::Index>(a), static_cast<Eigen::Index>(b)));
    }
    g.heads.push_back(heads[a]);
  }
  return groups;
}

// 1/σ of each row of u [T, d] as the MLP norm computes it.
Eigen::VectorXd inverseScales(const Eigen::MatrixXd& u, bool rms, double eps) {
  const Eigen::VectorXd mean = rms ? Eigen::VectorXd::Zero(u.rows()) : Eigen::VectorXd(u.rowwise().mean());
  const Eigen::VectorXd var = (u.colwise() - mean).rowwise().squaredNorm() / static_cast<double>(u.cols());
  return (var.array() + eps).rsqrt();
}

}  // namespace

double kernelSimilarity(const Eigen::MatrixXf& a, const Eigen::MatrixXf& b, int64_t skip) {
  return 1.0 - meanRowTv(a.cast<double>(), b.cast<double>(), skip);
}

NeuronAnalysis analyzeNeurons(const NeuronCircuitMaps& circuit, const std::vector<HeadReport>& heads,
                              const Eigen::MatrixXd& means, const NeuronWindows& windows, const NeuronOptions& options,
                              unsigned threads) {
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  NeuronAnalysis out;
  for (const auto& h : heads)
    if (h.contextual) {
      if (h.kernel.size() == 0) throw std::invalid_argument("analyzeNeurons: head " + std::to_string(h.head) + " has no kernel");
      out.contextual_heads.push_back(h.head);
    }
  out.groups = groupHeads(out.contextual_heads, heads, options.group_similarity, options.skip);
  out.windows = static_cast<int64_t>(windows.ids.size());
  if (out.contextual_heads.empty()) return out;
  const bool rms = circuit.norm_bias.size() == 0;
  const Eigen::Index d = circuit.w_in.cols(), neurons = circuit.w_in.rows(), t = means.rows();
  const Eigen::Index dh = circuit.wv.front().rows(), hc = static_cast<Eigen::Index>(out.contextual_heads.size());

  // s: the mean 1/σ over the sampled windows' queries.
  double inverse_sum = 0;
  Eigen::Index rows = 0;
  for (const auto& u : windows.mlp_input) {
    inverse_sum += inverseScales(u.bottomRows(t - options.skip), rms, circuit.norm_eps).sum();
    rows += t - options.skip;
  }
  out.inverse_scale = rows > 0 ? inverse_sum / static_cast<double>(rows) : 1.0;
  // The neurons' input maps read through the norm: s γ ⊙ w_j, centred over d for LayerNorm
  // (w·(u - mean u) = (w - mean w)·u); then through the stacked output maps: M [N, Hc dh].
  Eigen::MatrixXd w_read = (circuit.w_in.array().rowwise() * circuit.norm_weight.transpose().array()).matrix() * out.inverse_scale;
  if (!rms) w_read.colwise() -= w_read.rowwise().mean();
  Eigen::MatrixXd wv(hc * dh, d), wo(d, hc * dh);
  for (Eigen::Index c = 0; c < hc; ++c) {
    const auto h = static_cast<std::size_t>(out.contextual_heads[static_cast<std::size_t>(c)]);
    wv.middleRows(c * dh, dh) = circuit.wv[h];
    wo.middleCols(c * dh, dh) = circuit.wo[h];
  }
  const Eigen::MatrixXd m = w_read * wo;  // [N, Hc dh]
  const Eigen::RowVectorXd mean_input = means.bottomRows(t - options.skip).colwise().mean();

  // Every token: c(v) = M Wv (x(v) - P̄), in chunks of the vocabulary; per neuron its sum,
  // sum of squares and extremes, each neuron on one thread's share.
  const Eigen::Index vocab = circuit.token_inputs.rows(), chunk = 2048;
  std::vector<double> sum(static_cast<std::size_t>(neurons), 0), squares(static_cast<std::size_t>(neurons), 0);
  std::vector<TopK> high(static_cast<std::size_t>(neurons), TopK(static_cast<std::size_t>(options.top_tokens)));
  std::vector<TopK> low = high;
  for (Eigen::Index first = 0; first < vocab; first += chunk) {
    const Eigen::Index count = std::min(chunk, vocab - first);
    const Eigen::MatrixXd x = circuit.token_inputs.middleRows(first, count).cast<double>().rowwise() - mean_input;
    const Eigen::MatrixXd values = x * wv.transpose();  // [B, Hc dh]
    const Eigen::MatrixXd c = m * values.transpose();   // [N, B]
    parallelFor(static_cast<std::size_t>(neurons), threads, [&](std::size_t j) {
      const auto row = c.row(static_cast<Eigen::Index>(j));
      for (Eigen::Index v = 0; v < count; ++v) {
        const double value = row[v];
        sum[j] += value, squares[j] += value * value;
        high[j].offer(value, static_cast<int32_t>(first + v));
        low[j].offer(-value, static_cast<int32_t>(first + v));
      }
    });
  }

  // Prediction on each sampled window against the real pre-activation, both centred per
  // position over the windows (the prediction has no positional part).
  const Eigen::Index s = static_cast<Eigen::Index>(windows.ids.size()), q = t - options.skip;
  std::vector<Eigen::MatrixXd> predicted(static_cast<std::size_t>(s)), actual(static_cast<std::size_t>(s));
  std::vector<Eigen::MatrixXd> kernels;
  for (const auto h : out.contextual_heads) kernels.push_back(heads[static_cast<std::size_t>(h)].kernel.cast<double>());
  parallelFor(static_cast<std::size_t>(s), threads, [&](std::size_t c) {
    const auto& ids = windows.ids[c];
    Eigen::MatrixXd x(t, d);
    for (Eigen::Index i = 0; i < t; ++i) x.row(i) = circuit.token_inputs.row(ids[static_cast<std::size_t>(i)]).cast<double>() - mean_input;
    Eigen::MatrixXd attended(t, hc * dh);  // Σ_i K_h(n, i) W_V,h x_i for each contextual head
    for (Eigen::Index h = 0; h < hc; ++h)
      attended.middleCols(h * dh, dh).noalias() = kernels[static_cast<std::size_t>(h)] * (x * wv.middleRows(h * dh, dh).transpose());
    predicted[c] = (attended * m.transpose()).bottomRows(q);  // [q, N]
    const Eigen::MatrixXd& u = windows.mlp_input[c];
    Eigen::MatrixXd normed = rms ? u : Eigen::MatrixXd(u.colwise() - u.rowwise().mean());
    normed = (inverseScales(u, rms, circuit.norm_eps).asDiagonal() * normed).array().rowwise() * circuit.norm_weight.transpose().array();
    if (!rms) normed.rowwise() += circuit.norm_bias.transpose();
    Eigen::MatrixXd pre = normed * circuit.w_in.transpose();
    if (circuit.b_in.size() > 0) pre.rowwise() += circuit.b_in.transpose();
    actual[c] = pre.bottomRows(q);
  });
  Eigen::MatrixXd mean_predicted = Eigen::MatrixXd::Zero(q, neurons), mean_actual = Eigen::MatrixXd::Zero(q, neurons);
  for (Eigen::Index c = 0; c < s; ++c) mean_predicted += predicted[static_cast<std::size_t>(c)] / s, mean_actual += actual[static_cast<std::size_t>(c)] / s;
  Eigen::ArrayXd pa = Eigen::ArrayXd::Zero(neurons), pp = pa, aa = pa;
  Eigen::MatrixXd window_predicted(s, neurons), window_actual(s, neurons);
  for (Eigen::Index c = 0; c < s; ++c) {
    window_predicted.row(c) = predicted[static_cast<std::size_t>(c)].colwise().sum();
    window_actual.row(c) = actual[static_cast<std::size_t>(c)].colwise().sum();
    const Eigen::ArrayXXd p = predicted[static_cast<std::size_t>(c)] - mean_predicted, a = actual[static_cast<std::size_t>(c)] - mean_actual;
    pa += (p * a).colwise().sum().transpose();
    pp += p.square().colwise().sum().transpose();
    aa += a.square().colwise().sum().transpose();
  }

  const Eigen::ArrayXXd wp = window_predicted.rowwise() - window_predicted.colwise().mean();
  const Eigen::ArrayXXd wa = window_actual.rowwise() - window_actual.colwise().mean();
  const Eigen::ArrayXd wpa = (wp * wa).colwise().sum().transpose(), wpp = wp.square().colwise().sum().transpose(),
                       waa = wa.square().colwise().sum().transpose();
  const auto pearson = [s](double xy, double xx, double yy) {
    return s >= 2 && xx > 0 && yy > 0 ? xy / std::sqrt(xx * yy) : std::numeric_limits<double>::quiet_NaN();
  };
  const double n_vocab = static_cast<double>(vocab);
  for (Eigen::Index j = 0; j < neurons; ++j) {
    const auto k = static_cast<std::size_t>(j);
    NeuronReport r;
    r.neuron = j;
    const double mean = sum[k] / n_vocab;
    r.score = std::sqrt(std::max(0.0, squares[k] / n_vocab - mean * mean));
    r.correlation = pearson(pa[j], pp[j], aa[j]);
    r.window_correlation = pearson(wpa[j], wpp[j], waa[j]);
    r.top_positive = high[k].take(mean, false);
    r.top_negative = low[k].take(mean, true);
    out.neurons.push_back(std::move(r));
  }
  std::stable_sort(out.neurons.begin(), out.neurons.end(), [](const NeuronReport& a, const NeuronReport& b) { return a.score > b.score; });
  return out;
}

}  // namespace posgeom::heads
