#pragma once
// Process-wide compute settings: intra-op threads and the BLAS that LibTorch calls.
#include <string>
#include <vector>

namespace posgeom::runtime {

// 0 means all cores; more than kMaxThreadsPerCore per core is cut to that, with a warning.
// Returns the number of threads in use. Also keeps freed memory for reuse.
inline constexpr int kMaxThreadsPerCore = 4;
int configureThreads(int requested);
// The intra-op threads in use now.
int intraOpThreads();
// Freed memory stays with the process for the next allocation instead of going back to the
// system (glibc): the forward pass reallocates the same large buffers layer after layer.
void keepFreedMemoryForReuse();

// The OpenMP pool (LibTorch's element-wise ops) and OpenBLAS's own pool (matrix products)
// spin for milliseconds after each task; sharing the cores, each pool's spinning slows
// the other. Both read their settings once, when the process starts. These settings
// make idle threads sleep at once: "NAME=VALUE" for each one this process has not set.
std::vector<std::string> missingThreadSettings();
// When settings are missing: sets them and restarts this program (same process id,
// arguments and descriptors) with execv. Returns only when nothing is missing or the
// restart failed. Call it before the program reads input or writes output.
void restartWithThreadSettings(char** argv);
// "OMP_WAIT_POLICY=PASSIVE OPENBLAS_THREAD_TIMEOUT=4" as this process has them.
std::string describeThreadSettings();

struct BlasLibrary {
  std::string path;  // the shared object that provides sgemm_, links resolved
  bool reference = false;  // Netlib's reference BLAS: ~30x slower than OpenBLAS
};
BlasLibrary detectBlas();
// Logs one warning per process when the reference BLAS is in use.
void warnIfReferenceBlas();

}  // namespace posgeom::runtime
