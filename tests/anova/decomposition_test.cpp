#include "posgeom/anova/decomposition.h"

#include "anova_fixtures.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Decomposition, MatchesTheDefinitionsTokenByToken) {
  const auto h = randomSequences(12, 9, 5, 1);
  const int skip = 1;
  const auto d = anova::decompose(directStatistics(h, skip));
  const Eigen::Index t = 8;
  // Direct: m_t, mu, P, C, and the stacked cvec / resid matrices.
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(t, 5);
  for (const auto& x : h) m += x.bottomRows(t);
  m /= 12.0;
  const Eigen::RowVectorXd mu = m.colwise().mean();
  EXPECT_TRUE(d.positional.isApprox(m.rowwise() - mu, 1e-12));
  EXPECT_TRUE(d.global_mean.transpose().isApprox(mu, 1e-12));
  Eigen::MatrixXd cvec_moment = Eigen::MatrixXd::Zero(5, 5), resid_moment = Eigen::MatrixXd::Zero(5, 5);
  for (std::size_t c = 0; c < h.size(); ++c) {
    const Eigen::MatrixXd x = h[c].bottomRows(t);
    const Eigen::RowVectorXd ctx = x.colwise().mean() - mu;
    EXPECT_TRUE(d.context.row(static_cast<Eigen::Index>(c)).isApprox(ctx, 1e-12));
    const Eigen::MatrixXd cvec = x - m;  // h - pos_t - mu
    const Eigen::MatrixXd resid = cvec.rowwise() - ctx;
    cvec_moment += cvec.transpose() * cvec;
    resid_moment += resid.transpose() * resid;
  }
  EXPECT_TRUE(d.cvec_moment.isApprox(cvec_moment, 1e-10));
  EXPECT_TRUE(d.resid_moment.isApprox(resid_moment, 1e-10));
}

TEST(Decomposition, NoSequencesIsAnError) {
  anova::LayerStatistics empty;
  EXPECT_THROW(anova::decompose(empty), std::invalid_argument);
}

}  // namespace
}  // namespace posgeom::testing
