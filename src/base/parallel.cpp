#include "posgeom/base/parallel.h"

#include <dlfcn.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace posgeom {

void parallelFor(std::size_t count, unsigned workers, const std::function<void(std::size_t)>& body) {
  const std::size_t threads = std::min<std::size_t>(std::max(1u, workers), count);
  if (threads <= 1) {
    for (std::size_t i = 0; i < count; ++i) body(i);
    return;
  }
  // A thread started here takes OpenMP's default team (every core), the caller the team its
  // --threads set: where the process has OpenMP (a CUDA LibTorch's libgomp), a product on a
  // worker would sum in another order than on the caller. Each worker takes the caller's.
  using GetTeam = int (*)();
  using SetTeam = void (*)(int);
  static const auto get_team = reinterpret_cast<GetTeam>(dlsym(RTLD_DEFAULT, "omp_get_max_threads"));
  static const auto set_team = reinterpret_cast<SetTeam>(dlsym(RTLD_DEFAULT, "omp_set_num_threads"));
  const int team = get_team ? get_team() : 0;
  std::atomic<std::size_t> next{0};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto work = [&] {
    if (set_team && team > 0) set_team(team);
    try {
      for (std::size_t i; (i = next++) < count;) body(i);
    } catch (...) {
      const std::lock_guard<std::mutex> lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      next = count;
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace posgeom
