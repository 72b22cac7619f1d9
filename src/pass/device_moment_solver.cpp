#include "posgeom/pass/device_moment_solver.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>

#include <stdexcept>
#include <string>

#include "posgeom/runtime/torch_device.h"

namespace posgeom::pass {
namespace {

class TorchMomentSolver final : public metrics::MomentSolver {
 public:
  explicit TorchMomentSolver(runtime::DeviceSpec device) : device_(device) {}

  Eigen::VectorXd eigenvalues(const Eigen::MatrixXd& symmetric) const override {
    const Eigen::Index n = symmetric.rows();
    if (symmetric.cols() != n) throw std::invalid_argument("eigenvalues: the matrix is not square");
    if (n == 0) return {};
    const c10::NoGradGuard no_grad;
    // Eigen's storage is column-major: its lower triangle is the upper one of the
    // row-major tensor over the same memory.
    const auto host = at::from_blob(const_cast<double*>(symmetric.data()), {n, n}, at::kDouble);
    const auto ascending = at::linalg_eigvalsh(host.to(runtime::torchDevice(device_)), "U").to(at::kCPU).contiguous();
    const double* values = ascending.data_ptr<double>();
    Eigen::VectorXd descending(n);
    for (Eigen::Index i = 0; i < n; ++i) descending[i] = values[n - 1 - i];
    return descending;
  }

  std::string name() const override {
    return device_.isCuda() ? "cuSOLVER (LibTorch) on " + device_.str() : "LibTorch on " + device_.str();
  }
  bool usesCpuCores() const override { return !device_.isCuda(); }

 private:
  runtime::DeviceSpec device_;
};

}  // namespace

std::shared_ptr<const metrics::MomentSolver> momentSolverFor(const runtime::DeviceSpec& device) {
  return device.isCuda() ? torchMomentSolver(device) : metrics::lapackMomentSolver();
}

std::shared_ptr<const metrics::MomentSolver> torchMomentSolver(const runtime::DeviceSpec& device) {
  return std::make_shared<const TorchMomentSolver>(device);
}

}  // namespace posgeom::pass
