#pragma once
// Singular-value summaries of a basis.
#include <Eigen/Dense>

#include "posgeom/metrics/moment_solver.h"

namespace posgeom::metrics {

// Descending singular values.
Eigen::VectorXd singularValues(const Eigen::MatrixXd& m);
// Singular values of a stacked matrix X from its moment X^T X (descending, clamped at 0),
// its eigenvalues from `solver`.
Eigen::VectorXd singularValuesFromMoment(const Eigen::MatrixXd& moment, const MomentSolver& solver = *lapackMomentSolver());
// sum s_i^2 / s_1^2 (0 for a zero matrix).
double stableRank(const Eigen::VectorXd& singular_values);
// sum_{i < rank} s_i / sum s_i.
double explainedRatio(const Eigen::VectorXd& singular_values, int rank);

}  // namespace posgeom::metrics
