#include "posgeom/base/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

namespace posgeom {
namespace {

TEST(ParallelFor, RunsEveryItemOnceOnUpToTheWorkersAsked) {
  for (unsigned workers : {0u, 1u, 3u, 16u}) {
    std::vector<std::atomic<int>> runs(40);
    std::mutex mutex;
    std::set<std::thread::id> threads;
    parallelFor(runs.size(), workers, [&](std::size_t i) {
      ++runs[i];
      const std::lock_guard<std::mutex> lock(mutex);
      threads.insert(std::this_thread::get_id());
    });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1) << workers << " workers";
    EXPECT_LE(threads.size(), std::max(1u, workers));
  }
}

TEST(ParallelFor, InOrderOnTheCallersThreadForOneWorker) {
  std::vector<std::size_t> order;
  const auto caller = std::this_thread::get_id();
  parallelFor(5, 1, [&](std::size_t i) {
    EXPECT_EQ(std::this_thread::get_id(), caller);
    order.push_back(i);
  });
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 3, 4}));
}

TEST(ParallelFor, RethrowsTheFailureAndStartsNothingAfterIt) {
  std::atomic<int> started{0};
  EXPECT_THROW(parallelFor(1000, 1, [&](std::size_t i) {
                 ++started;
                 if (i == 3) throw std::runtime_error("item 3");
               }),
               std::runtime_error);
  EXPECT_EQ(started.load(), 4);
  started = 0;
  EXPECT_THROW(parallelFor(1000, 2, [&](std::size_t i) {
                 ++started;
                 if (i == 0) throw std::runtime_error("item 0");
                 std::this_thread::sleep_for(std::chrono::microseconds(50));
               }),
               std::runtime_error);
  EXPECT_LT(started.load(), 1000);
}

TEST(ParallelFor, NothingToDo) {
  parallelFor(0, 4, [](std::size_t) { FAIL() << "no items"; });
}

}  // namespace
}  // namespace posgeom
