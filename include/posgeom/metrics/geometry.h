#pragma once
// Angles between bases: incoherence of position and context, clusters of contexts,
// consistency of positional bases across layers.
#include <Eigen/Dense>
#include <string>
#include <vector>

namespace posgeom::metrics {

struct CosineSummary {
  double max = 0;
  double mean = 0;
};
// |cos| between every row of a and every row of b (zero rows skipped).
CosineSummary absCosines(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);

struct LabelCosines {
  double within = 0;   // mean |cos| between contexts with the same label
  double between = 0;  // ... with different labels
  int labels = 0;
};
// Contexts (rows) grouped by label; needs at least two labels to mean anything.
LabelCosines labelCosines(const Eigen::MatrixXd& contexts, const std::vector<std::string>& labels);

// Cosine of two matrices as vectors (0 when shapes differ or one is zero).
double matrixCosine(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b);
// Cosines of the principal angles between the row spaces' top-r right singular subspaces.
Eigen::VectorXd principalAngleCosines(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b, Eigen::Index r);
// The same from orthonormal bases of the two subspaces [d, r] each.
Eigen::VectorXd principalAngleCosinesOf(const Eigen::MatrixXd& va, const Eigen::MatrixXd& vb);

// Top principal directions of P's rows (right singular vectors, lapack::thinSvd's signs) [d, r].
Eigen::MatrixXd topDirections(const Eigen::MatrixXd& p, Eigen::Index r);

}  // namespace posgeom::metrics
