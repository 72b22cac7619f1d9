#include "anova_fixtures.h"

#include <algorithm>
#include <cmath>

#include <gtest/gtest.h>

#include <random>

namespace posgeom::testing {

Sequences randomSequences(int n, int t, int d, unsigned seed) {
  std::mt19937 rng(seed);
  std::normal_distribution<double> normal;
  // A smooth positional part, a per-sequence offset and noise: all three parts present.
  Eigen::MatrixXd pos(t, d);
  for (int i = 0; i < t; ++i)
    for (int j = 0; j < d; ++j) pos(i, j) = std::sin(0.1 * (i + 1) * (j % 5 + 1)) * (j < 6 ? 2.0 : 0.1);
  Sequences out;
  for (int c = 0; c < n; ++c) {
    Eigen::RowVectorXd ctx(d);
    for (int j = 0; j < d; ++j) ctx[j] = normal(rng);
    Eigen::MatrixXd h = pos;
    for (int i = 0; i < t; ++i)
      for (int j = 0; j < d; ++j) h(i, j) += ctx[j] + 0.3 * normal(rng) + 0.5;
    out.push_back(h);
  }
  return out;
}

anova::LayerStatistics directStatistics(const Sequences& h, int skip_first, int64_t layer) {
  anova::LayerStatistics s;
  s.layer = layer;
  const auto t = h.front().rows() - skip_first, d = h.front().cols();
  s.position_sum = Eigen::MatrixXd::Zero(t, d);
  s.second_moment = Eigen::MatrixXd::Zero(d, d);
  s.context_second_moment = Eigen::MatrixXd::Zero(d, d);
  s.context_means.resize(static_cast<Eigen::Index>(h.size()), d);
  for (std::size_t c = 0; c < h.size(); ++c) {
    const Eigen::MatrixXd x = h[c].bottomRows(t);
    s.position_sum += x;
    s.second_moment += x.transpose() * x;
    const Eigen::RowVectorXd mean = x.colwise().mean();
    s.context_second_moment += mean.transpose() * mean;
    s.context_means.row(static_cast<Eigen::Index>(c)) = mean;
    s.context_windows.push_back(static_cast<int64_t>(c));
    s.context_labels.push_back(c % 2 ? "odd" : "even");
    s.norm_sum += x.rowwise().norm().sum();
  }
  s.sequences = static_cast<int64_t>(h.size());
  return s;
}

anova::MagnitudeStatistics directMagnitudes(const Sequences& h, int skip_first, const std::vector<int64_t>& windows,
                                            const std::vector<std::vector<int64_t>>& ids) {
  anova::MagnitudeStatistics m;
  const auto t = h.front().rows(), d = h.front().cols();
  m.position_abs_max = Eigen::MatrixXd::Zero(t, d);
  m.max_window.assign(static_cast<std::size_t>(d), -1);
  m.max_position.assign(static_cast<std::size_t>(d), -1);
  m.max_token.assign(static_cast<std::size_t>(d), -1);
  m.counts.assign(static_cast<std::size_t>(anova::kMagnitudeBins), 0.0);
  m.skipped_position_sum = Eigen::MatrixXd::Zero(skip_first, d);
  m.position_square_sum = Eigen::VectorXd::Zero(t);
  std::vector<double> best(static_cast<std::size_t>(d), -1.0);
  for (std::size_t c = 0; c < h.size(); ++c) {
    for (Eigen::Index p = 0; p < t; ++p)
      for (Eigen::Index i = 0; i < d; ++i) {
        const double a = std::abs(h[c](p, i));
        m.position_abs_max(p, i) = std::max(m.position_abs_max(p, i), a);
        const auto at = static_cast<std::size_t>(i);
        if (a > best[at]) {  // strictly: the first of equal ones stays
          best[at] = a;
          m.max_window[at] = windows[c];
          m.max_position[at] = p;
          m.max_token[at] = ids.empty() ? -1 : ids[c][static_cast<std::size_t>(p)];
        }
        m.counts[static_cast<std::size_t>(anova::magnitudeBin(a))] += 1;
      }
    m.skipped_position_sum += h[c].topRows(skip_first);
    m.position_square_sum += h[c].rowwise().squaredNorm();
    m.context_square_sum += h[c].colwise().mean().squaredNorm();
    m.context_square_sum_from_1 += h[c].bottomRows(t - 1).colwise().mean().squaredNorm();
  }
  return m;
}

anova::LayerStatistics directStatisticsWithMagnitudes(const Sequences& h, int skip_first, int64_t layer) {
  auto s = directStatistics(h, skip_first, layer);
  std::vector<int64_t> windows(h.size());
  for (std::size_t c = 0; c < h.size(); ++c) windows[c] = static_cast<int64_t>(c);
  s.magnitudes = directMagnitudes(h, skip_first, windows,
                                  std::vector<std::vector<int64_t>>(h.size(), std::vector<int64_t>(static_cast<std::size_t>(h.front().rows()), 7)));
  return s;
}

// Every number and sample of two accumulators' statistics, bit for bit.
void expectSameStatistics(const std::vector<anova::LayerStatistics>& a, const std::vector<anova::LayerStatistics>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].layer, b[i].layer);
    EXPECT_EQ(a[i].sequences, b[i].sequences);
    EXPECT_EQ(a[i].position_sum, b[i].position_sum);
    EXPECT_EQ(a[i].second_moment, b[i].second_moment);
    EXPECT_EQ(a[i].context_second_moment, b[i].context_second_moment);
    EXPECT_EQ(a[i].norm_sum, b[i].norm_sum);
    EXPECT_EQ(a[i].previous_cosine_sum, b[i].previous_cosine_sum);
    EXPECT_EQ(a[i].layer_cosines, b[i].layer_cosines);
    EXPECT_EQ(a[i].earlier_cosine_sums, b[i].earlier_cosine_sums);
    EXPECT_EQ(a[i].context_means, b[i].context_means);
    EXPECT_EQ(a[i].context_labels, b[i].context_labels);
    EXPECT_EQ(a[i].reservoir, b[i].reservoir);
    EXPECT_EQ(a[i].reservoir_windows, b[i].reservoir_windows);
    EXPECT_EQ(a[i].attention_input_sum, b[i].attention_input_sum);
    EXPECT_EQ(a[i].attention_samples, b[i].attention_samples);
    EXPECT_EQ(a[i].attention_sample_windows, b[i].attention_sample_windows);
    const auto &x = a[i].magnitudes, &y = b[i].magnitudes;
    EXPECT_EQ(x.position_abs_max, y.position_abs_max);
    EXPECT_EQ(x.max_window, y.max_window);
    EXPECT_EQ(x.max_position, y.max_position);
    EXPECT_EQ(x.max_token, y.max_token);
    EXPECT_EQ(x.counts, y.counts);
    EXPECT_EQ(x.skipped_position_sum, y.skipped_position_sum);
    EXPECT_EQ(x.position_square_sum, y.position_square_sum);
    EXPECT_EQ(x.context_square_sum, y.context_square_sum);
    EXPECT_EQ(x.context_square_sum_from_1, y.context_square_sum_from_1);
  }
}

}  // namespace posgeom::testing
