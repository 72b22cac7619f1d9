#include "posgeom/pass/rank_reduce.h"

#include <gtest/gtest.h>

#include <random>

#include "anova_fixtures.h"
#include "rank_threads.h"

namespace posgeom::pass {
namespace {

constexpr Eigen::Index kPositions = 4, kDim = 3, kAttentionRows = 5;

// Statistics of one layer over `windows` (a rank's shard), random but fixed by the windows:
// every window's own sample rows are a function of its index, as a pass would make them.
anova::LayerStatistics statisticsOver(const std::vector<int64_t>& windows, int64_t layer, bool heads, const anova::SampleCaps& caps) {
  anova::LayerStatistics l;
  l.layer = layer;
  l.sequences = static_cast<int64_t>(windows.size());
  l.position_sum = Eigen::MatrixXd::Zero(kPositions, kDim);
  l.second_moment = Eigen::MatrixXd::Zero(kDim, kDim);
  l.context_second_moment = Eigen::MatrixXd::Zero(kDim, kDim);
  if (heads) l.attention_input_sum = Eigen::MatrixXd::Zero(kAttentionRows, kDim);
  l.context_means.resize(0, kDim);
  l.reservoir.resize(0, kDim);
  l.attention_samples.resize(0, kDim);
  l.layer_cosines = true;
  l.earlier_cosine_sums = Eigen::VectorXd::Zero(layer);
  // Magnitudes over every position (no skip here): from their definitions.
  testing::Sequences sequences;
  std::vector<std::vector<int64_t>> ids;
  for (const auto w : windows) {
    std::mt19937 rng(static_cast<unsigned>(w * 31 + layer));
    std::normal_distribution<double> normal;
    auto random = [&](Eigen::Index rows, Eigen::Index cols) {
      Eigen::MatrixXd m(rows, cols);
      for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = normal(rng);
      return m;
    };
    Eigen::MatrixXd h = random(kPositions, kDim);
    h(0, 1) = 7;                                      // the same largest in every window: the lowest window's
    h(2, 2) = 3 + static_cast<double>((w * 5) % 11);  // one window's largest, on whichever rank holds it
    sequences.push_back(h);
    ids.emplace_back();
    for (Eigen::Index t = 0; t < kPositions; ++t) ids.back().push_back(1000 * w + t);
    l.position_sum += h;
    l.second_moment += h.transpose() * h;
    const Eigen::RowVectorXd mean = h.colwise().mean();
    l.context_second_moment += mean.transpose() * mean;
    l.norm_sum += h.rowwise().norm().sum();
    l.previous_cosine_sum += 0.5;
    for (Eigen::Index m = 0; m < layer; ++m) l.earlier_cosine_sums[m] += 0.01 * static_cast<double>(w + m);
    const Eigen::MatrixXd attention = random(kAttentionRows, kDim);
    if (heads) l.attention_input_sum += attention;
    auto append = [](Eigen::MatrixXd& m, const Eigen::MatrixXd& rows) {
      Eigen::MatrixXd grown(m.rows() + rows.rows(), rows.cols());
      grown << m, rows;
      m = std::move(grown);
    };
    if (static_cast<int64_t>(l.context_windows.size()) < caps.contexts) {
      append(l.context_means, mean);
      l.context_windows.push_back(w);
      l.context_labels.push_back("doc" + std::to_string(w % 3));
    }
    if (static_cast<int64_t>(l.reservoir_windows.size()) < caps.reservoir) {
      append(l.reservoir, h);
      l.reservoir_windows.push_back(w);
    }
    if (heads && static_cast<int64_t>(l.attention_sample_windows.size()) < caps.attention_samples) {
      append(l.attention_samples, attention);
      l.attention_sample_windows.push_back(w);
    }
  }
  l.magnitudes = windows.empty() ? anova::MagnitudeStatistics::none(kPositions, 0, kDim)
                                 : testing::directMagnitudes(sequences, 0, windows, ids);
  return l;
}

std::vector<int64_t> shardOf(int rank, int world, int64_t windows) {
  std::vector<int64_t> own;
  for (int64_t w = rank; w < windows; w += world) own.push_back(w);
  return own;
}

void expectSameStatistics(const anova::LayerStatistics& expected, const anova::LayerStatistics& actual) {
  EXPECT_EQ(actual.layer, expected.layer);
  EXPECT_EQ(actual.sequences, expected.sequences);
  EXPECT_LT((actual.position_sum - expected.position_sum).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((actual.second_moment - expected.second_moment).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_LT((actual.context_second_moment - expected.context_second_moment).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(actual.norm_sum, expected.norm_sum, 1e-12);
  EXPECT_NEAR(actual.previous_cosine_sum, expected.previous_cosine_sum, 1e-12);
  EXPECT_EQ(actual.layer_cosines, expected.layer_cosines);
  ASSERT_EQ(actual.earlier_cosine_sums.size(), expected.earlier_cosine_sums.size());
  if (expected.earlier_cosine_sums.size()) {
    EXPECT_LT((actual.earlier_cosine_sums - expected.earlier_cosine_sums).cwiseAbs().maxCoeff(), 1e-12);
  }
  EXPECT_EQ(actual.attention_input_sum.size(), expected.attention_input_sum.size());
  if (expected.attention_input_sum.size()) {
    EXPECT_LT((actual.attention_input_sum - expected.attention_input_sum).cwiseAbs().maxCoeff(), 1e-12);
  }
  // The samples are copies: exact.
  EXPECT_EQ(actual.context_windows, expected.context_windows);
  EXPECT_EQ(actual.context_labels, expected.context_labels);
  EXPECT_EQ(actual.context_means, expected.context_means);
  EXPECT_EQ(actual.reservoir_windows, expected.reservoir_windows);
  EXPECT_EQ(actual.reservoir, expected.reservoir);
  EXPECT_EQ(actual.attention_sample_windows, expected.attention_sample_windows);
  EXPECT_EQ(actual.attention_samples, expected.attention_samples);
  // Maxima and where they were: exact; the counts and sums as the others.
  const auto &a = actual.magnitudes, &e = expected.magnitudes;
  EXPECT_EQ(a.position_abs_max, e.position_abs_max);
  EXPECT_EQ(a.max_window, e.max_window);
  EXPECT_EQ(a.max_position, e.max_position);
  EXPECT_EQ(a.max_token, e.max_token);
  EXPECT_EQ(a.counts, e.counts);
  EXPECT_LT((a.position_square_sum - e.position_square_sum).cwiseAbs().maxCoeff(), 1e-12);
  EXPECT_NEAR(a.context_square_sum, e.context_square_sum, 1e-12);
  EXPECT_NEAR(a.context_square_sum_from_1, e.context_square_sum_from_1, 1e-12);
}

// The reduction is what merge makes of the ranks' statistics, and what one process over
// all windows holds: sums, and the lowest windows' samples; a rank with no window (world
// 4 over 3 windows) takes part with nothing.
TEST(RankReduce, EqualsMergeOfTheRanksAndOneProcessOverAllWindows) {
  const anova::SampleCaps caps{5, 2, 3};
  for (const auto& [world, windows] : std::vector<std::pair<int, int64_t>>{{2, 11}, {3, 11}, {4, 3}}) {
    std::vector<anova::LayerStatistics> whole;
    std::vector<int64_t> all(static_cast<std::size_t>(windows));
    for (int64_t w = 0; w < windows; ++w) all[static_cast<std::size_t>(w)] = w;
    for (const int64_t layer : {0, 2}) whole.push_back(statisticsOver(all, layer, layer > 0, caps));
    std::vector<anova::LayerStatistics> merged;
    for (int r = 0; r < world; ++r)
      for (std::size_t i = 0; i < 2; ++i) {
        const auto part = statisticsOver(shardOf(r, world, windows), whole[i].layer, i > 0, caps);
        if (r == 0) {
          merged.push_back(part);
        } else {
          anova::merge(merged[i], part, caps);
        }
      }
    std::vector<anova::LayerStatistics> on_root;
    const auto outcomes = testing::runRankThreads(world, testing::loopbackRendezvous(), std::chrono::seconds(20), [&](runtime::RankGroup& g) {
      std::vector<anova::LayerStatistics> mine;
      for (const int64_t layer : {0, 2}) mine.push_back(statisticsOver(shardOf(g.rank(), world, windows), layer, layer > 0, caps));
      auto reduced = reduceToRoot(std::move(mine), g, caps);
      if (g.root()) {
        on_root = std::move(reduced);
      } else {
        EXPECT_TRUE(reduced.empty());
      }
    });
    for (const auto& o : outcomes) ASSERT_FALSE(o.failed) << o.message;
    ASSERT_EQ(on_root.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      SCOPED_TRACE("world " + std::to_string(world) + ", layer " + std::to_string(whole[i].layer));
      expectSameStatistics(merged[i], on_root[i]);
      expectSameStatistics(whole[i], on_root[i]);
      EXPECT_EQ(on_root[i].magnitudes.max_window[1], 0);  // the tie: every window's 7, window 0's named
      EXPECT_EQ(on_root[i].magnitudes.max_position[1], 0);
    }
  }
}

// A resumed distributed run: rank 0 takes every sum, the others zeros; each rank the
// samples of its own windows.
TEST(RankReduce, ResumeShareSplitsTheSamplesByOwner) {
  const anova::SampleCaps caps{5, 2, 3};
  std::vector<int64_t> all{0, 1, 2, 3, 4, 5, 6, 7};
  const auto saved = statisticsOver(all, 1, true, caps);
  std::vector<anova::LayerStatistics> shares(2);
  const auto outcomes = testing::runRankThreads(2, testing::loopbackRendezvous(), std::chrono::seconds(20), [&](runtime::RankGroup& g) {
    const int rank = g.rank();
    auto share = resumeShare(g.root() ? std::vector<anova::LayerStatistics>{saved} : std::vector<anova::LayerStatistics>{}, g,
                             [rank](int64_t w) { return w % 2 == rank; });
    ASSERT_EQ(share.size(), 1u);
    shares[static_cast<std::size_t>(rank)] = share[0];
  });
  for (const auto& o : outcomes) ASSERT_FALSE(o.failed) << o.message;
  EXPECT_EQ(shares[0].sequences, 8);
  EXPECT_EQ(shares[0].position_sum, saved.position_sum);
  EXPECT_EQ(shares[1].sequences, 0);
  EXPECT_EQ(shares[1].position_sum, Eigen::MatrixXd::Zero(kPositions, kDim));
  EXPECT_EQ(shares[1].second_moment.rows(), kDim);
  EXPECT_EQ(shares[0].context_windows, (std::vector<int64_t>{0, 2, 4}));
  EXPECT_EQ(shares[1].context_windows, (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(shares[1].context_labels, (std::vector<std::string>{"doc1", "doc0"}));
  EXPECT_EQ(shares[1].context_means.row(1), saved.context_means.row(3));
  EXPECT_EQ(shares[0].attention_sample_windows, (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(shares[1].attention_samples, saved.attention_samples.middleRows(kAttentionRows, kAttentionRows));
  EXPECT_EQ(shares[1].reservoir_windows, (std::vector<int64_t>{1}));
  // The magnitudes: rank 0's the saved ones, the others' a run's that saw nothing yet.
  EXPECT_EQ(shares[0].magnitudes.max_window, saved.magnitudes.max_window);
  EXPECT_EQ(shares[1].magnitudes.position_abs_max, Eigen::MatrixXd::Zero(kPositions, kDim));
  EXPECT_EQ(shares[1].magnitudes.max_window, (std::vector<int64_t>(kDim, -1)));
  // The cosines between layers: rank 0's the saved sums, the others' zeros of the same length.
  EXPECT_EQ(shares[0].earlier_cosine_sums, saved.earlier_cosine_sums);
  EXPECT_TRUE(shares[1].layer_cosines);
  EXPECT_EQ(shares[1].earlier_cosine_sums, Eigen::VectorXd::Zero(1));
}

// Ranks that disagree on the cosines between layers (one went layer-major) reduce to none.
TEST(RankReduce, CosinesBetweenLayersOnlyWhereEveryRankHasThem) {
  const anova::SampleCaps caps{5, 2, 3};
  std::vector<anova::LayerStatistics> reduced(2);
  const auto outcomes = testing::runRankThreads(2, testing::loopbackRendezvous(), std::chrono::seconds(20), [&](runtime::RankGroup& g) {
    auto own = statisticsOver(shardOf(g.rank(), 2, 6), 2, false, caps);
    if (g.rank() == 1) own.layer_cosines = false, own.earlier_cosine_sums.resize(0);
    auto layers = reduceToRoot({own}, g, caps);
    if (g.root()) reduced[0] = layers.at(0);
  });
  for (const auto& o : outcomes) ASSERT_FALSE(o.failed) << o.message;
  EXPECT_FALSE(reduced[0].layer_cosines);
  EXPECT_EQ(reduced[0].earlier_cosine_sums.size(), 0);
  EXPECT_EQ(reduced[0].sequences, 6);
}

}  // namespace
}  // namespace posgeom::pass
