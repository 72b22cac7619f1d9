#pragma once
// The end stage's d x d eigenvalue problems where the run computed: LibTorch's eigvalsh on
// the run's device (cuSOLVER on a CUDA one), in float64. Torch-free header.
#include <memory>

#include "posgeom/metrics/moment_solver.h"
#include "posgeom/runtime/device.h"

namespace posgeom::pass {

// LAPACK for a run on the CPU (the cores, threaded); LibTorch's solver on a CUDA device.
std::shared_ptr<const metrics::MomentSolver> momentSolverFor(const runtime::DeviceSpec& device);

// LibTorch's eigvalsh on `device`, the CPU included (what the tests hold against LAPACK).
std::shared_ptr<const metrics::MomentSolver> torchMomentSolver(const runtime::DeviceSpec& device);

}  // namespace posgeom::pass
