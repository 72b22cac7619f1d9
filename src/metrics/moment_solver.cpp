#include "posgeom/metrics/moment_solver.h"

#include "posgeom/metrics/lapack.h"

namespace posgeom::metrics {
namespace {

class LapackMomentSolver final : public MomentSolver {
 public:
  Eigen::VectorXd eigenvalues(const Eigen::MatrixXd& symmetric) const override {
    return lapack::symmetricEigenvalues(symmetric);
  }
  std::string name() const override { return "LAPACK"; }
  bool usesCpuCores() const override { return true; }
};

}  // namespace

std::shared_ptr<const MomentSolver> lapackMomentSolver() {
  static const auto solver = std::make_shared<const LapackMomentSolver>();
  return solver;
}

}  // namespace posgeom::metrics
