#pragma once
// The dense decompositions of the end stages on the machine's optimised LAPACK (OpenBLAS
// on Debian, threaded over the cores); Eigen stays for the rest. Torch-free.
#include <Eigen/Dense>

namespace posgeom::metrics::lapack {

// All eigenvalues of a symmetric matrix (its lower triangle is read), descending (dsyevd).
Eigen::VectorXd symmetricEigenvalues(const Eigen::MatrixXd& symmetric);

// The largest eigenvalue of a symmetric positive semi-definite matrix: Lanczos with full
// reorthogonalisation, accepted once its residual bounds the error below `relative`
// (|theta - lambda| <= |A v - theta v| for a symmetric A); all eigenvalues otherwise.
double largestEigenvalue(const Eigen::MatrixXd& symmetric, double relative = 1e-13);

// Singular values, descending (dgesdd without vectors).
Eigen::VectorXd singularValues(const Eigen::MatrixXd& m);

// The singular values and the right singular vectors [cols, min(rows, cols)] (dgesdd),
// each vector's sign fixed so that its largest-magnitude entry is positive: the spiral
// and the principal directions do not flip between libraries or thread counts.
struct ThinSvd {
  Eigen::VectorXd values;
  Eigen::MatrixXd right;
};
ThinSvd thinSvd(const Eigen::MatrixXd& m);

// While alive, each BLAS/LAPACK call uses at most `threads` threads (OpenBLAS's setting,
// restored after; nothing with another library): for callers that run several
// decompositions side by side.
class LimitedThreads {
 public:
  explicit LimitedThreads(int threads);
  ~LimitedThreads();
  LimitedThreads(const LimitedThreads&) = delete;
  LimitedThreads& operator=(const LimitedThreads&) = delete;

 private:
  int previous_ = 0;
};

}  // namespace posgeom::metrics::lapack
