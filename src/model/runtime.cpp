#include "posgeom/model/runtime.h"

#include <dlfcn.h>

#include <ATen/Parallel.h>
#include <filesystem>
#include <mutex>
#include <spdlog/spdlog.h>
#include <thread>

namespace posgeom::model {

int configureThreads(int requested) {
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  const int n = requested > 0 ? requested : cores;
  at::set_num_threads(n);
  return at::get_num_threads();
}

BlasLibrary detectBlas() {
  BlasLibrary blas;
  void* symbol = dlsym(RTLD_DEFAULT, "sgemm_");
  Dl_info info{};
  if (symbol == nullptr || dladdr(symbol, &info) == 0 || info.dli_fname == nullptr) {
    blas.path = "(none found; LibTorch uses its own kernels)";
    return blas;
  }
  std::error_code ec;
  const auto real = std::filesystem::canonical(info.dli_fname, ec);
  blas.path = ec ? std::string(info.dli_fname) : real.string();
  const bool optimized = blas.path.find("openblas") != std::string::npos ||
                         blas.path.find("blis") != std::string::npos || blas.path.find("mkl") != std::string::npos ||
                         blas.path.find("atlas") != std::string::npos;
  blas.reference = !optimized && blas.path.find("libblas") != std::string::npos;
  return blas;
}

void warnIfReferenceBlas() {
  static std::once_flag once;
  std::call_once(once, [] {
    const auto blas = detectBlas();
    if (blas.reference)
      spdlog::warn("the reference BLAS is in use ({}): matrix products run ~30x slower; "
                   "install libopenblas0-pthread (tools/bootstrap does)",
                   blas.path);
  });
}

}  // namespace posgeom::model
