#include "rendezvous.h"

#include <torch/csrc/distributed/c10d/FileStore.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <system_error>
#include <thread>

#include <unistd.h>

#include "posgeom/base/error.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::runtime::rendezvous {
namespace {

constexpr Milliseconds kJoinMargin{2000};  // past the timeout, a rendezvous that did not answer is given up
constexpr int64_t kMostRanksJoined = int64_t{1} << 31;  // more is not a count of ranks but another protocol's bytes

// A store nobody takes stays open for the process's last moments: closing it could run
// c10d's threads into the exit.
void keepUntilExit(c10::intrusive_ptr<c10d::Store> store) {
  static std::mutex mutex;
  static auto* kept = new std::vector<c10::intrusive_ptr<c10d::Store>>();
  const std::lock_guard<std::mutex> lock(mutex);
  kept->push_back(std::move(store));
}

// c10d's TCPStore, once connected, waits on its socket without a deadline: another program
// on the port that accepts (or whose listen queue does) and never answers would hold the
// rendezvous for ever. So the ranks meet on a thread of their own, which the caller waits
// for within the timeout (and a margin), and a stop signal ends that wait too. The thread
// may outlive the wait: what it uses is its own.
struct Meeting {
  Launch launch;
  Milliseconds timeout;
  std::chrono::steady_clock::time_point start = std::chrono::steady_clock::now();
  c10::intrusive_ptr<c10d::Store> store;
  bool hosts_store = false;
  std::exception_ptr error;
  bool done = false;
  std::mutex mutex;
  std::condition_variable finished;
  std::atomic<bool> answered{false};   // the rendezvous answered a first query
  std::atomic<bool> abandoned{false};  // the caller gave up waiting

  Meeting(Launch l, Milliseconds t) : launch(std::move(l)), timeout(t) {}

  void run() {
    try {
      connect();
      join();
    } catch (...) {
      error = std::current_exception();
    }
    if (abandoned && store) keepUntilExit(std::move(store));
    const std::lock_guard<std::mutex> lock(mutex);
    done = true;
    finished.notify_all();
  }

  bool has(const std::string& key) const { return store->check({key}); }

  void connect() {
    const auto& r = launch.rendezvous;
    if (r.rfind("file://", 0) == 0) {
      store = c10::make_intrusive<c10d::FileStore>(r.substr(7), launch.world);
    } else {
      const auto hostport = r.substr(6);
      const auto colon = hostport.rfind(':');
      c10d::TCPStoreOptions options;
      options.port = static_cast<uint16_t>(std::stoi(hostport.substr(colon + 1)));
      hosts_store = launch.rank == 0 && !launch.agent_store;
      options.isServer = hosts_store;
      options.numWorkers = launch.world;
      options.waitWorkers = false;  // the join below names who did not come
      options.timeout = timeout;
      const auto host = hostport.substr(0, colon);
      try {
        store = c10::make_intrusive<c10d::TCPStore>(host, options);
      } catch (const std::exception& e) {
        throw RankFailed("rank " + std::to_string(launch.rank) + " could not reach the rendezvous " + r + ": " +
                             firstLine(e.what()),
                         kRankLostExitCode);
      }
    }
    store = c10::make_intrusive<c10d::PrefixStore>("posgeom/" + std::to_string(launch.attempt), store);
  }

  // Every rank counts itself in and leaves its mark; within the timeout all must be there.
  // Where rank 0 gives up first (someone did not come), its store goes with it: the others
  // name that, as a lost rank, not as a bare store error.
  void join() {
    try {
      joinStore();
    } catch (const RankFailed&) {
      throw;
    } catch (const InputError&) {
      throw;
    } catch (const std::exception& e) {
      const bool rank0_serves = launch.rendezvous.rfind("tcp://", 0) == 0 && !launch.agent_store;
      throw RankFailed((rank0_serves ? "rank 0, which serves the rendezvous " : "the rendezvous ") + launch.rendezvous +
                           ", stopped answering while the ranks joined: " + firstLine(e.what()),
                       kRankLostExitCode);
    }
  }

  void joinStore() {
    const int64_t arrived = store->add("joined", 1);
    if (arrived < 1 || arrived > kMostRanksJoined)
      throw InputError(launch.rendezvous, "answers, but not as a posgeom (c10d) rendezvous: another program is on that port; give the run a free one");
    answered = true;
    if (arrived > launch.world)
      throw InputError(launch.rendezvous, "holds an earlier run's rendezvous (" + std::to_string(arrived) + " ranks joined a world of " +
                                              std::to_string(launch.world) + "): give each run its own");
    store->set(key("here", launch.rank), asBytes("1"));
    // One deadline from the start, connect included: the caller's wait ends a margin after it.
    const auto deadline = start + timeout;
    while (store->add("joined", 0) < launch.world) {
      if (abandoned) throw std::runtime_error("abandoned");
      if (std::chrono::steady_clock::now() > deadline) {
        std::vector<int> missing;
        for (int r = 0; r < launch.world; ++r)
          if (!has(key("here", r))) missing.push_back(r);
        throw RankFailed(ranksText(missing) + " did not join " + launch.rendezvous + " within " +
                             std::to_string(timeout.count() / 1000) + " s",
                         kRankLostExitCode);
      }
      std::this_thread::sleep_for(kPoll);
    }
  }

};

// LibTorch 1.13's TCPStore reads watched keys on a thread of its own, which throws an
// uncaught std::system_error when the other end resets the connection (a foreign program
// on the port that closes, a rank 0 that died): std::terminate, abort, exit 134. Such a
// process ends as a rank that lost its rendezvous does, in one line with exit code 4; the
// rank's own line, where the same reset reaches it too, comes first.
constexpr std::chrono::seconds kOwnLineGrace{2};
std::string g_lost_line;  // written once, before the handler is installed
std::terminate_handler g_previous_terminate = nullptr;

[[noreturn]] void onTerminate() {
  std::string cause;
  try {
    if (const auto e = std::current_exception()) std::rethrow_exception(e);
  } catch (const std::system_error& e) {
    cause = e.what();
  } catch (...) {
  }
  if (cause.empty()) {
    if (g_previous_terminate) g_previous_terminate();
    std::abort();
  }
  std::this_thread::sleep_for(kOwnLineGrace);  // the main thread's exit, with its line, wins
  const std::string line = g_lost_line + firstLine(cause) + "\n";
  [[maybe_unused]] const auto written = ::write(2, line.data(), line.size());
  ::_exit(kRankLostExitCode);
}

void containC10dThreadErrors(const Launch& launch) {
  static std::once_flag once;
  std::call_once(once, [&] {
    g_lost_line = "posgeom: error: rank " + std::to_string(launch.rank) + " lost its connection to the rendezvous " +
                  launch.rendezvous + ": ";
    g_previous_terminate = std::set_terminate(onTerminate);
  });
}

// c10d's own warnings (a refused connect it retries, glog's "Logging before
// InitGoogleLogging()") come before posgeom's one line and say less: silenced, unless
// TORCH_CPP_LOG_LEVEL asks for them.
void quietC10d() {
  if (std::getenv("TORCH_CPP_LOG_LEVEL")) return;
  FLAGS_caffe2_log_level = std::max<int>(FLAGS_caffe2_log_level, 3);  // fatal only: posgeom says what failed
}

std::shared_ptr<Meeting> meetOnThread(const Launch& launch, Milliseconds timeout) {
  quietC10d();
  containC10dThreadErrors(launch);
  auto meeting = std::make_shared<Meeting>(launch, timeout);
  const StopSignals signals;
  std::thread([meeting] { meeting->run(); }).detach();
  const auto give_up = meeting->start + timeout + kJoinMargin;
  std::unique_lock<std::mutex> lock(meeting->mutex);
  while (!meeting->done) {
    if (const int signal = signals.received()) {
      meeting->abandoned = true;
      throw RunStopped(std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " while waiting for ranks at " + launch.rendezvous,
                       128 + signal);
    }
    if (std::chrono::steady_clock::now() > give_up) {
      meeting->abandoned = true;
      const std::string within = " within " + std::to_string(timeout.count() / 1000) + " s";
      throw RankFailed("rank " + std::to_string(launch.rank) + ": " + launch.rendezvous +
                           (meeting->answered ? " stopped answering while the ranks joined (nothing" + within + "): is rank 0 hung?"
                                              : " did not answer as a rendezvous" + within +
                                                    " (is another program on that port, or is rank 0 hung?)"),
                       kRankLostExitCode);
    }
    meeting->finished.wait_for(lock, kPoll);
  }
  if (meeting->error) std::rethrow_exception(meeting->error);
  return meeting;
}

}  // namespace

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string ranksText(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

std::string asString(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }
std::vector<uint8_t> asBytes(const std::string& s) { return {s.begin(), s.end()}; }
std::string key(const char* what, int rank) { return std::string(what) + "/" + std::to_string(rank); }

Joined meet(const Launch& launch, Milliseconds timeout) {
  const auto meeting = meetOnThread(launch, timeout);
  return {meeting->store, meeting->hosts_store};
}

}  // namespace posgeom::runtime::rendezvous
