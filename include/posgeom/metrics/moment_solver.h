#pragma once
// Where a layer's d x d symmetric eigenvalue problems are solved: the moments of cvec and
// resid, the O(d^3) part of its end stage. LAPACK here; a device's solver comes from a later
// stage (pass: cuSOLVER through LibTorch, where the statistics were gathered). Torch-free.
#include <Eigen/Dense>
#include <memory>
#include <string>

namespace posgeom::metrics {

class MomentSolver {
 public:
  virtual ~MomentSolver() = default;
  // All eigenvalues of a symmetric matrix (its lower triangle is read), descending.
  virtual Eigen::VectorXd eigenvalues(const Eigen::MatrixXd& symmetric) const = 0;
  // What solves them, for the log and the timings: "LAPACK", "cuSOLVER on cuda:0".
  virtual std::string name() const = 0;
  // Whether it computes on the CPU's cores (then layers side by side share them out).
  virtual bool usesCpuCores() const = 0;
};

// dsyevd on the machine's LAPACK (lapack::symmetricEigenvalues).
std::shared_ptr<const MomentSolver> lapackMomentSolver();

}  // namespace posgeom::metrics
