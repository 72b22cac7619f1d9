#include "posgeom/runtime/rank_group.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "posgeom/base/error.h"
#include "rank_threads.h"
#include "test_support.h"

namespace posgeom::runtime {
namespace {

using namespace std::chrono_literals;

using testing::runRankThreads;
std::string tcp() { return testing::loopbackRendezvous(); }

TEST(RankGroup, CollectivesOverThreeRanks) {
  std::vector<std::vector<double>> reduced(3);
  std::vector<std::vector<std::string>> gathered(3);
  std::vector<std::string> broadcast(3);
  std::vector<std::vector<int64_t>> sums(3);
  const auto outcomes = runRankThreads(3, tcp(), 20s, [&](RankGroup& g) {
    const auto r = static_cast<std::size_t>(g.rank());
    EXPECT_EQ(g.backend(), "gloo");
    sums[r] = g.sumAll({1, g.rank(), 10 * g.rank()});
    std::vector<double> values{0.5 * g.rank(), 1e-17 * g.rank(), 1.0};
    g.sumToRoot(values.data(), 3);
    reduced[r] = values;
    gathered[r] = g.gatherAll(std::string(static_cast<std::size_t>(g.rank()) * 3, 'a' + static_cast<char>(g.rank())));
    broadcast[r] = g.broadcastFromRoot(g.root() ? "from rank 0" : "ignored");
    std::vector<double> on_root{g.root() ? 4.0 : 0.0, g.root() ? -2.5 : 0.0};
    g.broadcastFromRoot(on_root.data(), 2);
    EXPECT_EQ(on_root, (std::vector<double>{4.0, -2.5}));
  });
  for (const auto& o : outcomes) EXPECT_FALSE(o.failed) << o.message;
  for (std::size_t r = 0; r < 3; ++r) {
    EXPECT_EQ(sums[r], (std::vector<int64_t>{3, 3, 30}));
    EXPECT_EQ(gathered[r], (std::vector<std::string>{"", "bbb", "cccccc"}));
    EXPECT_EQ(broadcast[r], "from rank 0");
  }
  EXPECT_EQ(reduced[0], (std::vector<double>{1.5, 3e-17, 3.0}));
}

// A rank that fails says why before it goes: the others' next collective names it and
// takes its exit code; so too when the failed rank is the one that serves the store.
TEST(RankGroup, AFailedRanksWordReachesTheOthers) {
  for (const int failing : {2, 0}) {
    const auto outcomes = runRankThreads(3, tcp(), 20s, [&](RankGroup& g) {
      g.sumAll({1});
      if (g.rank() == failing) {
        g.announceFailure(2, "corpus.gz: not in gzip format");
        return;
      }
      g.sumAll({1});
    });
    for (int r = 0; r < 3; ++r) {
      const auto& o = outcomes[static_cast<std::size_t>(r)];
      if (r == failing) {
        EXPECT_FALSE(o.failed) << o.message;
        continue;
      }
      EXPECT_TRUE(o.failed);
      EXPECT_EQ(o.exit_code, 2);
      EXPECT_EQ(o.message, "rank " + std::to_string(failing) + " failed: corpus.gz: not in gzip format");
    }
  }
}

// A rank that vanishes without a word (its connections close, as when it is killed), and
// one that hangs past the timeout: the others name it, exit code 4.
TEST(RankGroup, ALostOrHungRankIsNamed) {
  auto lost = runRankThreads(3, tcp(), 20s, [](RankGroup& g) {
    g.sumAll({1});
    if (g.rank() == 1) return;  // its group goes, silently
    g.sumAll({1});
  });
  for (const int r : {0, 2}) {
    EXPECT_EQ(lost[static_cast<std::size_t>(r)].exit_code, kRankLostExitCode);
    EXPECT_EQ(lost[static_cast<std::size_t>(r)].message.rfind("rank 1 stopped answering during a step's agreement", 0), 0u)
        << lost[static_cast<std::size_t>(r)].message;
  }
  const auto start = std::chrono::steady_clock::now();
  auto hung = runRankThreads(2, tcp(), 2s, [](RankGroup& g) {
    if (g.rank() == 1) {
      std::this_thread::sleep_for(8s);
      return;
    }
    std::vector<double> sums{1.0};
    g.sumToRoot(sums.data(), 1);
  });
  EXPECT_EQ(hung[0].exit_code, kRankLostExitCode);
  EXPECT_EQ(hung[0].message.rfind("rank 1 stopped answering during the sums' reduction", 0), 0u) << hung[0].message;
  EXPECT_LT(std::chrono::steady_clock::now() - start, 40s);  // bounded by the timeout, not forever
}

// The timeout bounds rank 1's connect too: a second or two of a loaded machine's start-up
// must not make the rank that did come look absent.
TEST(RankGroup, ARankThatNeverComesIsNamedAtTheRendezvous) {
  const auto outcomes = runRankThreads(3, tcp(), 5s, [](RankGroup&) {}, {2});
  EXPECT_EQ(outcomes[0].exit_code, kRankLostExitCode);
  EXPECT_EQ(outcomes[0].message.rfind("rank 2 did not join", 0), 0u) << outcomes[0].message;
  // Rank 1 gives up too: on its own timeout, naming rank 2, or when rank 0 gave up first
  // and its store went with it.
  EXPECT_EQ(outcomes[1].exit_code, kRankLostExitCode) << outcomes[1].message;
  EXPECT_TRUE(outcomes[1].message.rfind("rank 2 did not join", 0) == 0 ||
              outcomes[1].message.rfind("rank 0, which serves the rendezvous tcp://", 0) == 0)
      << outcomes[1].message;
}

// Rank 0 gives up on a missing rank before rank 1 does, and its store goes with it: rank 1
// says so in one line, as a lost rank, instead of a bare store error.
TEST(RankGroup, TheRendezvousServerGivingUpFirstIsNamed) {
  const std::string rendezvous = tcp();
  std::string messages[2];
  int codes[2] = {0, 0};
  auto rank = [&](int r, std::chrono::milliseconds timeout) {
    try {
      Launch launch;
      launch.launcher = "test";
      launch.rank = r;
      launch.world = 3;  // rank 2 never comes
      launch.rendezvous = rendezvous;
      RankGroup group(launch, timeout, DeviceSpec{});
    } catch (const RankFailed& e) {
      messages[r] = e.what();
      codes[r] = e.exitCode();
    } catch (const std::exception& e) {
      messages[r] = e.what();
      codes[r] = -1;
    }
  };
  std::thread server(rank, 0, 2s);
  std::this_thread::sleep_for(300ms);  // rank 0's store is up before rank 1 connects
  std::thread client(rank, 1, 30s);
  server.join();
  client.join();
  EXPECT_EQ(messages[0].rfind("rank 2 did not join", 0), 0u) << messages[0];
  EXPECT_EQ(codes[1], kRankLostExitCode) << messages[1];
  EXPECT_EQ(messages[1].rfind("rank 0, which serves the rendezvous " + rendezvous + ", stopped answering while the ranks joined", 0), 0u)
      << messages[1];
}

// A shared file system instead of a host and port.
TEST(RankGroup, FileStoreRendezvous) {
  testing::ScratchDir s;
  const std::string init = "file://" + (s / "rendezvous").string();
  std::vector<int64_t> sum;
  auto outcomes = runRankThreads(2, init, 20s, [&](RankGroup& g) {
    const auto v = g.sumAll({g.rank() + 1});
    if (g.root()) sum = v;
  });
  for (const auto& o : outcomes) EXPECT_FALSE(o.failed) << o.message;
  EXPECT_EQ(sum, (std::vector<int64_t>{3}));
}

}  // namespace
}  // namespace posgeom::runtime
