#include "rank_threads.h"

#include <algorithm>
#include <thread>

#include "test_support.h"

namespace posgeom::testing {

std::vector<RankOutcome> runRankThreads(int world, const std::string& rendezvous, std::chrono::milliseconds timeout,
                                        const std::function<void(runtime::RankGroup&)>& body, const std::vector<int>& absent,
                                        const runtime::DeviceSpec& device) {
  std::vector<RankOutcome> outcomes(static_cast<std::size_t>(world));
  std::vector<std::thread> threads;
  for (int r = 0; r < world; ++r) {
    if (std::find(absent.begin(), absent.end(), r) != absent.end()) continue;
    threads.emplace_back([&, r] {
      auto& outcome = outcomes[static_cast<std::size_t>(r)];
      try {
        runtime::Launch launch;
        launch.launcher = "test";
        launch.rank = r;
        launch.local_rank = r;
        launch.world = world;
        launch.rendezvous = rendezvous;
        runtime::RankGroup group(launch, timeout, device);
        body(group);
      } catch (const runtime::RankFailed& e) {
        outcome = {true, e.exitCode(), e.what()};
      } catch (const std::exception& e) {
        outcome = {true, -1, e.what()};
      }
    });
  }
  for (auto& t : threads) t.join();
  return outcomes;
}

std::string loopbackRendezvous() { return "tcp://127.0.0.1:" + std::to_string(freePort()); }

}  // namespace posgeom::testing
