#include "posgeom/heads/qk_positional_basis.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::heads;

// Positions on a few slow cosines in d dims, plus a little noise: a positional basis with
// a clear top block.
Eigen::MatrixXd spiralMeans(int t, int d, unsigned seed) {
  srand(seed);
  Eigen::MatrixXd means = 0.01 * Eigen::MatrixXd::Random(t, d);
  const Eigen::MatrixXd mix = Eigen::MatrixXd::Random(4, d);
  for (int i = 0; i < t; ++i)
    for (int f = 0; f < 4; ++f) means.row(i) += 3.0 / (f + 1) * std::cos(3.14159 * (f + 1) * i / t) * mix.row(f);
  return means;
}

// The same basis from Eigen's Jacobi SVD, not the LAPACK one the code uses.
PositionalBasis jacobiBasis(const Eigen::MatrixXd& means, int64_t skip, int64_t rank) {
  const Eigen::MatrixXd rows = means.bottomRows(means.rows() - skip);
  const Eigen::MatrixXd centred = rows.rowwise() - rows.colwise().mean();
  Eigen::JacobiSVD<Eigen::MatrixXd> svd(centred, Eigen::ComputeThinV);
  Eigen::Index m = 0;
  while (m < svd.singularValues().size() && svd.singularValues()[m] > 1e-9 * svd.singularValues()[0]) ++m;
  return {svd.matrixV().leftCols(m), rank};
}

TEST(QkPositionalBasis, BasisSpansTheCentredMeansRowsOnly) {
  const Eigen::MatrixXd means = spiralMeans(40, 64, 3);
  const PositionalBasis basis = positionalBasis(means, 5, 10, metrics::ScreeNotStrategy::kImpute);
  const PositionalBasis oracle = jacobiBasis(means, 5, 0);
  ASSERT_EQ(basis.directions.cols(), 34);  // 35 rows, centred: rank 34 in 64 dims
  ASSERT_EQ(oracle.directions.cols(), 34);
  const Eigen::MatrixXd projector = basis.directions * basis.directions.transpose();
  EXPECT_LT((projector - oracle.directions * oracle.directions.transpose()).cwiseAbs().maxCoeff(), 1e-9);
  EXPECT_EQ(basis.rank, positionalSubspace(means, 5, 10, metrics::ScreeNotStrategy::kImpute).cols());
}

TEST(QkPositionalBasis, EveryNumberAgreesWithTheDenseDefinition) {
  const int t = 48, d = 40, dh = 6;
  const Eigen::MatrixXd means = spiralMeans(t, d, 11);
  const PositionalBasis basis = jacobiBasis(means, 5, 4);
  srand(5);
  HeadMaps head{Eigen::MatrixXd::Random(dh, d), Eigen::VectorXd::Zero(dh), Eigen::MatrixXd::Random(dh, d), {}};
  head.q_norm = Eigen::VectorXd::Random(dh).array() + 1.5;  // folded into W_Q
  const double scale = 0.3;
  const QkBasisReport r = qkInPositionalBasis(head, basis, scale, 20);

  // From the definition: the whole d x d W_QK, its diagonal removed, in the basis.
  const Eigen::MatrixXd w = scale * (head.q_norm.asDiagonal() * head.wq).transpose() * head.wk;
  Eigen::MatrixXd rest = w;
  rest.diagonal().setZero();
  const Eigen::MatrixXd m = basis.directions.transpose() * rest * basis.directions;
  const double tau = std::sqrt(2 * std::log(double(m.size()))) * std::sqrt(m.array().square().mean());
  int64_t kept = 0, in_block = 0;
  for (Eigen::Index a = 0; a < m.rows(); ++a)
    for (Eigen::Index b = 0; b < m.cols(); ++b)
      if (std::abs(m(a, b)) > tau) ++kept, in_block += a < 4 && b < 4;
  EXPECT_NEAR(r.diagonal_share, w.diagonal().squaredNorm() / w.squaredNorm(), 1e-12);
  EXPECT_NEAR(r.threshold, tau, 1e-12 * tau);
  EXPECT_EQ(r.kept, kept);
  ASSERT_GT(kept, 0);
  EXPECT_NEAR(r.block_share, double(in_block) / double(kept), 1e-15);
  EXPECT_EQ(r.basis_dims, m.rows());
  ASSERT_EQ(r.kept_corner.rows(), 20);
  for (Eigen::Index a = 0; a < 20; ++a)
    for (Eigen::Index b = 0; b < 20; ++b)
      EXPECT_NEAR(r.kept_corner(a, b), std::abs(m(a, b)) > tau ? m(a, b) : 0.0, 1e-12);
  EXPECT_LT((r.standard_corner - w.topLeftCorner(20, 20)).cwiseAbs().maxCoeff(), 1e-12);
}

TEST(QkPositionalBasis, PlantedStructureIsWhereItWasPut) {
  const Eigen::MatrixXd means = spiralMeans(48, 40, 2);
  const PositionalBasis basis = jacobiBasis(means, 5, 3);
  const int dh = 3;
  // W_Q^T W_K = V_3 A V_3^T: the rest lives in the top 3 x 3 positional block only.
  srand(9);
  const Eigen::MatrixXd a = Eigen::MatrixXd::Random(dh, 3), b = Eigen::MatrixXd::Random(dh, 3);
  const HeadMaps planted{a * basis.directions.leftCols(3).transpose(), Eigen::VectorXd::Zero(dh),
                         b * basis.directions.leftCols(3).transpose(), {}};
  const QkBasisReport r = qkInPositionalBasis(planted, basis, 1.0);
  // Its diagonal is small and spread, so what passes the threshold is the block.
  EXPECT_GT(r.kept, 0);
  EXPECT_DOUBLE_EQ(r.block_share, 1.0);
  // A purely diagonal W_QK: all of it is diagonal, and no rest is left to threshold.
  HeadMaps diagonal{Eigen::MatrixXd::Zero(dh, 40), Eigen::VectorXd::Zero(dh), Eigen::MatrixXd::Zero(dh, 40), {}};
  for (int j = 0; j < dh; ++j) diagonal.wq(j, 7 + j) = 1, diagonal.wk(j, 7 + j) = 2;
  const QkBasisReport only = qkInPositionalBasis(diagonal, basis, 1.0);
  EXPECT_NEAR(only.diagonal_share, 1.0, 1e-15);
  EXPECT_NEAR(only.standard_corner(8, 8), 2.0, 1e-15);
  EXPECT_LT(only.kept_corner.cwiseAbs().maxCoeff(), 1e-12);
}

}  // namespace
}  // namespace posgeom::testing
