#pragma once
// DESIGN §4: hidden states split into global mean, positional basis, context basis,
// context vectors and residuals, from the sufficient statistics alone.
#include <Eigen/Dense>

#include "posgeom/anova/layer_statistics.h"

namespace posgeom::anova {

struct Decomposition {
  Eigen::VectorXd global_mean;  // mu = mean_t m_t, [d]
  Eigen::MatrixXd position_means;  // m_t, [T', d]
  Eigen::MatrixXd positional;   // P: pos_t = m_t - mu, [T', d]
  Eigen::MatrixXd context;      // C: ctx_c = hbar_c - mu for the kept sequences, [K, d]
  // Second moments over all N x T' tokens (empty when the statistics lack sum h h^T):
  Eigen::MatrixXd hidden_moment;   // sum h h^T                (the stacked M^T M)
  Eigen::MatrixXd cvec_moment;     // sum cvec cvec^T, cvec = h - pos_t - mu
  Eigen::MatrixXd resid_moment;    // sum resid resid^T, resid = cvec - ctx_c
  int64_t sequences = 0;
};

Decomposition decompose(const LayerStatistics& stats);

}  // namespace posgeom::anova
