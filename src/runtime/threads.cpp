#include "posgeom/runtime/threads.h"

#include "posgeom/base/log.h"

#include <dlfcn.h>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <malloc.h>

#include <ATen/Parallel.h>
#include <filesystem>
#include <limits>
#include <mutex>
#include <thread>
#include <unistd.h>

namespace posgeom::runtime {

void keepFreedMemoryForReuse() {
#if defined(__GLIBC__)
  // glibc serves large blocks (activations, attention scores) with fresh mmaps and unmaps
  // them on free, so every layer page-faults its buffers in again: GPT-2-small's forward
  // pass ran at 227 tokens/s on 2 cores, mostly in the kernel; with freed blocks kept on
  // the heap and reused by the next layer, at 549.
  mallopt(M_MMAP_MAX, 0);
  mallopt(M_TRIM_THRESHOLD, std::numeric_limits<int>::max());
#endif
}

namespace {

// OpenBLAS's timeout is 2^N cycles of spinning (default N = 28, a tenth of a second).
const std::vector<std::pair<const char*, const char*>> kThreadSettings = {{"OMP_WAIT_POLICY", "PASSIVE"},
                                                                          {"OPENBLAS_THREAD_TIMEOUT", "4"}};

}  // namespace

std::vector<std::string> missingThreadSettings() {
  std::vector<std::string> missing;
  for (const auto& [name, value] : kThreadSettings)
    if (std::getenv(name) == nullptr) missing.push_back(std::string(name) + "=" + value);
  return missing;
}

void restartWithThreadSettings(char** argv) {
  if (missingThreadSettings().empty()) return;
  for (const auto& [name, value] : kThreadSettings) setenv(name, value, /*overwrite=*/0);
  execv("/proc/self/exe", argv);
  log::debug(std::string("could not restart with the thread settings (") + std::strerror(errno) +
             "); idle threads keep spinning");
}

std::string describeThreadSettings() {
  std::string out;
  for (const auto& [name, value] : kThreadSettings) {
    const char* set = std::getenv(name);
    out += (out.empty() ? "" : " ") + std::string(name) + "=" + (set ? set : "(unset)");
  }
  return out;
}

int configureThreads(int requested) {
  keepFreedMemoryForReuse();
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  // Far more threads than cores only thrash (and --threads 100000 would start them all).
  const int most = kMaxThreadsPerCore * cores;
  int n = requested > 0 ? requested : cores;
  if (n > most) {
    log::warn("--threads " + std::to_string(requested) + " is more than " + std::to_string(kMaxThreadsPerCore) +
              " per core of the " + std::to_string(cores) + " here: using " + std::to_string(most));
    n = most;
  }
  at::set_num_threads(n);
  return at::get_num_threads();
}

int intraOpThreads() { return at::get_num_threads(); }

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
      log::warn("the reference BLAS is in use (" + blas.path +
                "): matrix products run ~30x slower; install libopenblas0-pthread (tools/bootstrap does)");
  });
}

}  // namespace posgeom::runtime
