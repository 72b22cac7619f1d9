#pragma once
// ScreeNOT (Donoho, Gavish & Romanov 2023): the adaptive optimal hard threshold for
// singular values in noise of unknown, possibly correlated, structure.
#include <Eigen/Dense>
#include <string>

namespace posgeom::metrics {

enum class ScreeNotStrategy { kTransportToZero, kWinsorize, kImpute };  // '0', 'w', 'i'
ScreeNotStrategy parseScreeNotStrategy(const std::string& name);
const char* screeNotStrategyName(ScreeNotStrategy strategy);  // "0", "w", "i"

struct ScreeNotThreshold {
  double threshold = 0;
  int rank = 0;  // singular values above the threshold
};

// `singular_values` of an n x p matrix (any order); k bounds the signal rank. Throws
// InputError when k is too large for the matrix (k >= min(n,p), or 2k+1 >= min(n,p) when
// imputing).
ScreeNotThreshold screeNot(const Eigen::VectorXd& singular_values, Eigen::Index rows, Eigen::Index cols, int k,
                           ScreeNotStrategy strategy);
ScreeNotThreshold screeNot(const Eigen::MatrixXd& matrix, int k, ScreeNotStrategy strategy);
// Throws what screeNot would for a matrix whose smaller side is p, so that a run can
// refuse a --screenot-k before its long part rather than after it.
void checkScreeNotRank(int k, ScreeNotStrategy strategy, Eigen::Index p);

}  // namespace posgeom::metrics
