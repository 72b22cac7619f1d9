#include "posgeom/runtime/threads.h"

#include <algorithm>
#include <thread>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Runtime, ThreadCountIsHonoured) {
  EXPECT_EQ(runtime::configureThreads(1), 1);
  EXPECT_GE(runtime::configureThreads(0), 1);
  // --threads 100000 must not start 100000 threads.
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  EXPECT_EQ(runtime::configureThreads(100000), runtime::kMaxThreadsPerCore * cores);
  runtime::configureThreads(0);
}

TEST(Runtime, DetectsTheBlasBehindLibTorch) {
  const auto blas = runtime::detectBlas();
  EXPECT_FALSE(blas.path.empty());
  // The bootstrap installs OpenBLAS; CI must not silently run on the reference BLAS.
  if (runningInCi()) {
    EXPECT_FALSE(blas.reference) << blas.path;
  }
}

}  // namespace
}  // namespace posgeom::testing
