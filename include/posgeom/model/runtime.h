#pragma once
// Process-wide compute settings: intra-op threads and the BLAS that LibTorch calls.
#include <string>

namespace posgeom::model {

// 0 means all cores. Returns the number of threads in use.
int configureThreads(int requested);

struct BlasLibrary {
  std::string path;  // the shared object that provides sgemm_, links resolved
  bool reference = false;  // Netlib's reference BLAS: ~30x slower than OpenBLAS
};
BlasLibrary detectBlas();
// Logs one warning per process when the reference BLAS is in use.
void warnIfReferenceBlas();

}  // namespace posgeom::model
