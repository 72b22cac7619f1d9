#include "posgeom/heads/head_analysis.h"

#include <cmath>

#include "posgeom/base/error.h"
#include "posgeom/heads/sampled_attention.h"
#include "head_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

// Four heads: zero queries (uniform), a steep ALiBi slope (local), and two random ones.
BlockHeads fourHeads(int t, int d, int samples) {
  BlockHeads b;
  b.block = 3;
  b.means = Eigen::MatrixXd::Random(t, d);
  b.samples = Eigen::MatrixXd(samples * t, d);
  for (int c = 0; c < samples; ++c) b.samples.middleRows(c * t, t) = b.means + 0.3 * Eigen::MatrixXd::Random(t, d);
  for (int h = 0; h < 4; ++h) {
    HeadMaps m{Eigen::MatrixXd::Random(4, d), Eigen::VectorXd::Random(4), Eigen::MatrixXd::Random(4, d), {}};
    KernelSettings k;
    if (h == 0) m.wq.setZero(), m.bq.setZero();
    if (h == 1) m.wq.setZero(), m.bq.setZero(), k.positions.additive = positions::alibiTerm(3.0);
    b.maps.push_back(m);
    b.kernel.push_back(k);
  }
  return b;
}

TEST(HeadAnalysis, ClassesFlagsAndShapes) {
  const auto block = fourHeads(30, 8, 4);
  HeadOptions o;
  o.kernel_skip = 2;
  const auto heads = analyzeBlock(block, o);
  ASSERT_EQ(heads.size(), 4u);
  EXPECT_EQ(headKindName(heads[0].kind), "uniform");
  for (const auto& h : heads) EXPECT_FALSE(h.rope_bands);  // no RoPE here
  EXPECT_NEAR(heads[0].etc, 28.0, 1e-9);  // keys 2..29
  EXPECT_EQ(heads[0].keys, 28);
  EXPECT_TRUE(heads[0].contextual);       // broad, and zero queries make every denominator equal
  EXPECT_NEAR(heads[0].denominator_cv, 0.0, 1e-12);
  EXPECT_EQ(headKindName(heads[1].kind), "local");
  EXPECT_FALSE(heads[1].contextual);
  EXPECT_EQ(heads[1].window90, 0);        // e^-3 per step: 95% on the query position itself
  for (const auto& h : heads) {
    EXPECT_EQ(h.block, 3);
    EXPECT_EQ(h.samples, 4);
    EXPECT_EQ(h.etc_curve.size(), 30);
    EXPECT_NEAR(h.profile.sum(), 1.0, 1e-12);
    EXPECT_NEAR(h.qk_shares[0] + h.qk_shares[1] + h.qk_shares[2] + h.qk_shares[3], h.head < 2 ? 0.0 : 1.0, 1e-12);
    EXPECT_GE(h.qk_rank, 1);
  }
}

// A rotary head's bands come from the kernel's own queries: each sample's by default, the
// mean embedding's with --kernel-query mean.
TEST(HeadAnalysis, RopeBandsTakeTheKernelsQueries) {
  BlockHeads block = fourHeads(30, 8, 3);
  block.kernel[2].positions.rope.inverse_frequencies = plainRope(30.0, 4);
  std::vector<Eigen::VectorXd> shares;
  for (const auto mode : {QueryMode::kSampled, QueryMode::kMeanEmbedding}) {
    HeadOptions o;
    o.kernel_skip = 2;
    o.query = mode;
    const auto heads = analyzeBlock(block, o);
    ASSERT_TRUE(heads[2].rope_bands);
    EXPECT_FALSE(heads[3].rope_bands);
    KernelSettings s = block.kernel[2];
    s.skip = 2;
    const auto direct = ropeBands(block.maps[2], projectHead(block.maps[2], block.means, block.samples).projections(), s,
                                  mode == QueryMode::kMeanEmbedding);
    EXPECT_LT((heads[2].rope_bands->kernel_share - direct->kernel_share).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_NEAR(heads[2].rope_bands->etc_highest_band, direct->etc_highest_band, 1e-12);
    shares.push_back(heads[2].rope_bands->kernel_share);
  }
  EXPECT_GT((shares[0] - shares[1]).cwiseAbs().maxCoeff(), 1e-6);  // content varies: the modes' queries differ
}

TEST(HeadAnalysis, QueryModesDifferOnlyWhereContentVaries) {
  const auto block = fourHeads(20, 6, 3);
  HeadOptions sampled, mean;
  mean.query = QueryMode::kMeanEmbedding;
  const auto a = analyzeBlock(block, sampled), b = analyzeBlock(block, mean);
  EXPECT_NEAR(a[2].etc_mean_query, b[2].etc, 1e-12);  // the mean-embedding ETC is reported in both modes
  EXPECT_GT(std::abs(a[2].etc - b[2].etc), 1e-6);
  EXPECT_NEAR(a[0].etc, b[0].etc, 1e-9);  // zero queries: the content cannot matter
}

TEST(HeadAnalysis, ThreadsDoNotChangeResults) {
  const auto block = fourHeads(25, 6, 2);
  const auto one = analyzeBlock(block, {}, 1), many = analyzeBlock(block, {}, 4);
  for (std::size_t h = 0; h < 4; ++h) {
    EXPECT_EQ(one[h].etc, many[h].etc);
    EXPECT_EQ(one[h].qk_shares, many[h].qk_shares);
  }
}

// The block's one product for all heads, with key maps shared as grouped-query heads share
// them, gives each head what its own projections give.
TEST(HeadAnalysis, BlockProjectionsMatchEachHeadAlone) {
  for (const bool rope : {false, true}) {
    auto block = fourHeads(70, 8, 3);  // more queries than one causal product block
    block.maps[3].wk = block.maps[2].wk;
    for (auto& k : block.kernel) k.positions.rope.inverse_frequencies = rope ? plainRope(100.0, block.maps[0].wq.rows()) : std::vector<double>();
    HeadOptions o;
    o.kernel_skip = 3;
    const auto heads = analyzeBlock(block, o);
    for (std::size_t h = 0; h < 4; ++h) {
      KernelSettings s = block.kernel[h];
      s.skip = 3;
      const auto alone = sampleAttention(block.maps[h], block.means, block.samples, s);
      EXPECT_NEAR(heads[h].etc, 1.0 / alone.kernel.row(69).squaredNorm(), 1e-9 * heads[h].etc) << h;
      EXPECT_NEAR(heads[h].attention_entropy, alone.entropy, 1e-12) << h;
      EXPECT_NEAR(heads[h].attention_keys90, alone.keys90, 1e-12) << h;
      if (h >= 2) {
        EXPECT_NEAR(heads[h].denominator_cv, alone.denominator_cv, 1e-12) << h;
      }
      for (std::size_t j = 0; j < 4; ++j) EXPECT_NEAR(heads[h].qk_shares[j], alone.qk_shares[j], 1e-12) << h;
    }
  }
}

// Only the heads --qk-heads names get W_QK in the positional basis, with the block's
// basis and the head's own logit scale.
TEST(HeadAnalysis, QkBasisOnlyForAskedHeads) {
  auto block = fourHeads(30, 8, 2);
  block.kernel[3].positions.scale = 0.25;
  HeadOptions o;
  o.qk_maps = {{3, 3}, {2, 2}};  // block 2 is not this block
  const auto heads = analyzeBlock(block, o);
  for (const auto& h : heads) EXPECT_EQ(h.qk_basis.has_value(), h.head == 3) << h.head;
  const PositionalBasis basis = positionalBasis(block.means, o.kernel_skip, o.subspace_k, o.subspace_strategy);
  const QkBasisReport direct = qkInPositionalBasis(block.maps[3], basis, 0.25);
  EXPECT_DOUBLE_EQ(heads[3].qk_basis->diagonal_share, direct.diagonal_share);
  EXPECT_EQ(heads[3].qk_basis->kept, direct.kept);
  EXPECT_EQ(heads[3].qk_basis->basis_dims, 8);  // 25 positions after the skip, 8 dims
  EXPECT_EQ(heads[3].qk_maps.size(), qkMapNames().size());
}

// Windows of a random stretch repeated three times, each position holding its token's
// embedding and the previous token's (as if a previous-token head had written it): a head
// that matches its query's token against the keys' previous token is an induction head, one
// that matches the query's previous token against the keys' own, nearest first, a
// previous-token head. Planted, so each must be named, and the random one neither.
TEST(HeadAnalysis, ProbeNamesPlantedInductionAndPreviousTokenHeads) {
  const int period = 10, t = 30, e = 16, samples = 6;
  srand(21);
  const Eigen::MatrixXd embedding = Eigen::MatrixXd::Random(200, e) * 1.7;  // rows ~ unit variance
  BlockHeads b;
  b.block = 0;
  b.samples = Eigen::MatrixXd::Zero(samples * t, 2 * e);
  for (int c = 0; c < samples; ++c) {
    std::vector<int> stretch;
    for (int i = 0; i < period; ++i) stretch.push_back(rand() % 200);
    for (int n = 0; n < t; ++n) {
      b.samples.block(c * t + n, 0, 1, e) = embedding.row(stretch[static_cast<std::size_t>(n % period)]);
      if (n > 0) b.samples.block(c * t + n, e, 1, e) = embedding.row(stretch[static_cast<std::size_t>((n - 1) % period)]);
    }
  }
  b.means = Eigen::MatrixXd::Zero(t, 2 * e);
  for (int c = 0; c < samples; ++c) b.means += b.samples.middleRows(c * t, t) / samples;
  const Eigen::MatrixXd first = (Eigen::MatrixXd(e, 2 * e) << 3 * Eigen::MatrixXd::Identity(e, e), Eigen::MatrixXd::Zero(e, e)).finished();
  const Eigen::MatrixXd second = (Eigen::MatrixXd(e, 2 * e) << Eigen::MatrixXd::Zero(e, e), 3 * Eigen::MatrixXd::Identity(e, e)).finished();
  b.maps = {{first, Eigen::VectorXd::Zero(e), second, {}},   // induction
            {second, Eigen::VectorXd::Zero(e), first, {}},   // previous token (with a slope: nearest first)
            {Eigen::MatrixXd::Random(e, 2 * e) * 0.1, Eigen::VectorXd::Zero(e), Eigen::MatrixXd::Random(e, 2 * e) * 0.1, {}}};
  b.kernel.resize(3);
  b.kernel[1].positions.additive = positions::alibiTerm(0.5);
  HeadOptions o;
  o.kernel_skip = 0;
  o.repeat_period = period;
  const auto heads = analyzeBlock(b, o);
  EXPECT_GT(heads[0].induction_score, 0.6);  // a query in the third copy splits over both earlier copies
  EXPECT_LT(heads[0].previous_token_score, kPatternHeadAbove);
  EXPECT_GT(heads[1].previous_token_score, 0.9);
  EXPECT_LT(heads[1].induction_score, kPatternHeadAbove);
  EXPECT_LT(heads[2].induction_score, kPatternHeadAbove);
  EXPECT_LT(heads[2].previous_token_score, kPatternHeadAbove);
  o.repeat_period = 0;  // not a probe: no scores
  EXPECT_TRUE(std::isnan(analyzeBlock(b, o)[0].induction_score));
}

TEST(HeadAnalysis, LagScoreAveragesTheQueriesThatSeeTheKey) {
  Eigen::MatrixXd a = Eigen::MatrixXd::Zero(6, 6);
  for (int n = 0; n < 6; ++n) a(n, std::max(0, n - 2)) = 1.0;  // every query on the key two back
  KernelSettings s;
  s.skip = 0;
  EXPECT_DOUBLE_EQ(lagScore(a, 2, 0, s), 1.0);  // queries 2..5
  EXPECT_DOUBLE_EQ(lagScore(a, 1, 0, s), 0.2);  // of queries 1..5 only query 1 (on key 0)
  s.skip = 3;  // keys 0..2 outside the softmax: only queries 5 sees key 3
  EXPECT_DOUBLE_EQ(lagScore(a, 2, 0, s), 1.0);
  a(5, 3) = 0.25;
  EXPECT_DOUBLE_EQ(lagScore(a, 2, 0, s), 0.25);
  EXPECT_TRUE(std::isnan(lagScore(a, 2, 6, s)));
  s.skip = 0;
  s.positions.mask.window = 2;  // keys n-1, n only
  EXPECT_TRUE(std::isnan(lagScore(a, 2, 0, s)));
}

// The classes' names are what reports have always written, and read back to the same kind.
TEST(HeadAnalysis, HeadKindsRoundTripTheirReportNames) {
  EXPECT_EQ(headKindName(HeadKind::kLocal), "local");
  EXPECT_EQ(headKindName(HeadKind::kSlowDecay), "slow-decay");
  EXPECT_EQ(headKindName(HeadKind::kUniform), "uniform");
  for (const auto kind : kHeadKinds) EXPECT_EQ(parseHeadKind(headKindName(kind)), kind);
  EXPECT_EQ(parseHeadKind("Local"), std::nullopt);
  EXPECT_EQ(parseHeadKind(""), std::nullopt);
  EXPECT_EQ(parseHeadKind(classify(30, 100, {})), HeadKind::kSlowDecay);  // the classifier's names are the kinds'
}

TEST(HeadAnalysis, BadOptionsAreInputErrors) {
  EXPECT_THROW(parseQueryMode("median"), InputError);
  EXPECT_EQ(queryModeName(parseQueryMode("mean")), "mean");
  HeadOptions o;
  o.kernel_skip = 20;
  EXPECT_THROW(analyzeBlock(fourHeads(20, 6, 1), o), InputError);
}

}  // namespace
}  // namespace posgeom::testing
