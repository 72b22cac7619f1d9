#include "posgeom/metrics/layer_metrics.h"

#include <algorithm>

#include "anova_fixtures.h"
#include "posgeom/metrics/spectral.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// A solver that answers LAPACK's eigenvalues times four, and counts its calls.
class ScaledSolver final : public metrics::MomentSolver {
 public:
  Eigen::VectorXd eigenvalues(const Eigen::MatrixXd& symmetric) const override {
    ++calls;
    return 4 * metrics::lapackMomentSolver()->eigenvalues(symmetric);
  }
  std::string name() const override { return "scaled"; }
  bool usesCpuCores() const override { return false; }
  mutable int calls = 0;
};

TEST(LayerMetrics, TheMomentSpectraComeFromTheSolverAsked) {
  const auto stats = directStatistics(randomSequences(12, 9, 6, 3), 1);
  metrics::LayerMetricsOptions o;
  o.screenot_k = 2;
  const auto lapack = metrics::computeLayerMetrics(stats, o);
  const auto scaled = std::make_shared<ScaledSolver>();
  o.moment_solver = scaled;
  const auto m = metrics::computeLayerMetrics(stats, o);
  EXPECT_EQ(scaled->calls, 2);  // cvec's moment and resid's
  EXPECT_TRUE(m.singular_cvec.isApprox(2 * lapack.singular_cvec, 1e-15));
  EXPECT_TRUE(m.singular_resid.isApprox(2 * lapack.singular_resid, 1e-15));
  EXPECT_EQ(m.singular_pos, lapack.singular_pos);  // P's SVD is not a moment's
}

TEST(LayerMetrics, NumbersFollowTheirDefinitions) {
  const auto h = randomSequences(40, 33, 12, 8);
  const auto stats = directStatistics(h, 1);
  metrics::LayerMetricsOptions o;
  o.screenot_k = 5;
  const auto m = metrics::computeLayerMetrics(stats, o);
  const auto d = anova::decompose(stats);
  const auto s = metrics::singularValues(d.positional);
  EXPECT_NEAR(m.stable_rank, s.squaredNorm() / (s[0] * s[0]), 1e-12);
  // Relative norm: stack P once per sequence and all hidden states, compare operator norms.
  Eigen::MatrixXd stacked_p(40 * 32, 12), stacked_h(40 * 32, 12);
  for (int c = 0; c < 40; ++c) {
    stacked_p.middleRows(c * 32, 32) = d.positional;
    stacked_h.middleRows(c * 32, 32) = h[static_cast<size_t>(c)].bottomRows(32);
  }
  EXPECT_NEAR(*m.relative_norm, metrics::singularValues(stacked_p)[0] / metrics::singularValues(stacked_h)[0], 1e-10);
  EXPECT_GE(m.screenot.rank, 1);
  EXPECT_TRUE(m.label_cosines.has_value());  // even / odd labels
  EXPECT_EQ(m.gram.rows(), 32);
  EXPECT_EQ(m.spiral.cols(), 2);
  EXPECT_NEAR(m.mean_hidden_norm, stats.norm_sum / (40 * 32), 1e-12);
  // [P; C]: all 32 positions, then 40 contexts; the off-diagonal block is the incoherence.
  ASSERT_EQ(m.combined_positions, 32);
  ASSERT_EQ(m.combined_gram.rows(), 72);
  const Eigen::MatrixXd cross = m.combined_gram.topRightCorner(32, 40);
  EXPECT_NEAR(cross.cwiseAbs().maxCoeff(), m.incoherence.max, 1e-12);
  EXPECT_NEAR(m.combined_gram(40, 40), 1.0, 1e-12);
  EXPECT_NEAR(m.combined_gram(33, 50), d.context.row(1).normalized().dot(d.context.row(18).normalized()), 1e-12);
}

TEST(LayerMetrics, ConsecutiveLayersCompare) {
  const auto stats = directStatistics(randomSequences(20, 17, 8, 9), 1);
  metrics::LayerMetricsOptions o;
  o.screenot_k = 3;
  const auto a = metrics::computeLayerMetrics(stats, o);
  const auto c = metrics::compareLayers(a, a);
  EXPECT_NEAR(c.basis_cosine, 1.0, 1e-12);
  EXPECT_NEAR(c.principal_cosines.minCoeff(), 1.0, 1e-9);
}

// Layers side by side give what one after another gives; every layer is reported done.
TEST(LayerMetrics, AllLayersAtOnceEqualOneAtATime) {
  std::vector<anova::LayerStatistics> layers;
  for (int l = 0; l < 5; ++l) layers.push_back(directStatistics(randomSequences(20, 17, 24, 10 + l), 1, l));
  metrics::LayerMetricsOptions o;
  o.screenot_k = 3;
  std::vector<int64_t> done;
  const auto parallel = metrics::computeAllLayerMetrics(layers, o, 3, [&](int64_t l) { done.push_back(l); });
  std::sort(done.begin(), done.end());
  EXPECT_EQ(done, (std::vector<int64_t>{0, 1, 2, 3, 4}));
  ASSERT_EQ(parallel.size(), 5u);
  for (std::size_t l = 0; l < layers.size(); ++l) {
    const auto one = metrics::computeLayerMetrics(layers[l], o);
    EXPECT_EQ(parallel[l].layer, static_cast<int64_t>(l));  // in the order given
    EXPECT_EQ(parallel[l].screenot.rank, one.screenot.rank);
    EXPECT_NEAR(parallel[l].stable_rank, one.stable_rank, 1e-12 * one.stable_rank);
    EXPECT_NEAR(parallel[l].relative_norm.value(), one.relative_norm.value(), 1e-12);
    EXPECT_LT((parallel[l].singular_cvec - one.singular_cvec).cwiseAbs().maxCoeff(), 1e-10 * one.singular_cvec[0]);
    EXPECT_LT((parallel[l].spiral - one.spiral).cwiseAbs().maxCoeff(), 1e-10 * one.spiral.cwiseAbs().maxCoeff());
  }
  EXPECT_EQ(metrics::computeAllLayerMetrics(std::vector<anova::LayerStatistics>{}, o, 4).size(), 0u);
}

// The paper's Appendix B.2 matrix: each measured layer's mean cosine with every earlier
// measured one, symmetric, ones on the diagonal; layers that did not measure it left out.
TEST(LayerMetrics, LayerCosinesMakeASymmetricMatrixOfTheMeasuredLayers) {
  std::vector<metrics::LayerMetrics> layers(4);
  for (int64_t l = 0; l < 4; ++l) layers[static_cast<std::size_t>(l)].layer = l;
  EXPECT_TRUE(metrics::layerCosines(layers).layers.empty());
  layers[0].earlier_cosines = Eigen::VectorXd(0);
  layers[2].earlier_cosines = Eigen::Vector2d(0.3, 0.0);  // hidden.1 not measured
  layers[3].earlier_cosines = Eigen::Vector3d(0.2, 0.0, 0.9);
  const auto c = metrics::layerCosines(layers);
  EXPECT_EQ(c.layers, (std::vector<int64_t>{0, 2, 3}));
  Eigen::Matrix3d expected;
  expected << 1, 0.3, 0.2, 0.3, 1, 0.9, 0.2, 0.9, 1;
  EXPECT_EQ(c.cosine, Eigen::MatrixXd(expected));
}

// Mean cosines are the sums over the tokens: sequences x positions after the skip.
TEST(LayerMetrics, EarlierCosinesAreMeansOverTokens) {
  auto stats = directStatistics(randomSequences(6, 5, 4, 9), 1, 2);
  metrics::LayerMetricsOptions o;
  o.screenot_k = 1;
  EXPECT_FALSE(metrics::computeLayerMetrics(stats, o).earlier_cosines);
  stats.layer_cosines = true;
  stats.earlier_cosine_sums = Eigen::Vector2d(12.0, -6.0);
  const auto m = metrics::computeLayerMetrics(stats, o);
  ASSERT_TRUE(m.earlier_cosines);
  EXPECT_EQ(*m.earlier_cosines, Eigen::VectorXd(Eigen::Vector2d(0.5, -0.25)));  // 6 windows x 4 positions
}

TEST(LayerMetrics, EndStageMemoryGrowsWithTheSquareOfTheWidth) {
  EXPECT_EQ(metrics::layerMetricsBytes(4096, 511), 8 * (8 * 4096LL * 4096 + 4 * 511 * 4096 + 2 * 511 * 511));
  EXPECT_GT(static_cast<double>(metrics::layerMetricsBytes(4096, 128)) / metrics::layerMetricsBytes(2048, 128), 3.9);
}

// --lowfreq-k left at its default fits any window: 10, or every position of a shorter one
// (a default must not make short windows bad input); a given value is used as given.
TEST(LayerMetrics, TheDefaultLowFrequencyBlockFitsShortWindows) {
  EXPECT_EQ(metrics::lowFreqK(0, 127), 10);
  EXPECT_EQ(metrics::lowFreqK(0, 7), 7);
  EXPECT_EQ(metrics::lowFreqK(3, 7), 3);
}

}  // namespace
}  // namespace posgeom::testing
