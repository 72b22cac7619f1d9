#include "posgeom/hub/file_lock.h"

#include <atomic>
#include <chrono>
#include <thread>

#include "local_hub.h"

namespace posgeom::testing {
namespace {

TEST(FileLock, ASecondHolderWaitsAndIsTold) {
  ScratchDir s;
  const auto path = s / ".locks/models--o--m/e.lock";
  std::atomic<bool> told{false}, second_held{false};
  auto first = std::make_unique<hub::FileLock>(path);
  std::thread other([&] {
    hub::FileLock second(path, [&] { told = true; });
    second_held = true;
  });
  while (!told) std::this_thread::sleep_for(std::chrono::milliseconds(5));  // it found the lock held
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_FALSE(second_held);
  first.reset();
  other.join();
  EXPECT_TRUE(told);
  EXPECT_TRUE(second_held);
}

TEST(FileLock, AFreeLockIsTakenWithoutWaiting) {
  ScratchDir s;
  bool told = false;
  { hub::FileLock a(s / "x.lock", [&] { told = true; }); }
  { hub::FileLock b(s / "x.lock", [&] { told = true; }); }
  EXPECT_FALSE(told);
}

}  // namespace
}  // namespace posgeom::testing
