#include "posgeom/runtime/rank_group.h"

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
#include "posgeom/base/log.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/runtime/torch_device.h"

// Gloo where this LibTorch's headers come with gloo's (Debian's do, with libgloo-dev); NCCL
// where the LibTorch was built with it and the build says so (cmake: POSGEOM_HAVE_NCCL).
#if __has_include(<gloo/config.h>)
#define POSGEOM_HAVE_GLOO 1
#include <torch/csrc/distributed/c10d/ProcessGroupGloo.hpp>
#endif
#ifdef POSGEOM_HAVE_NCCL
#include <torch/csrc/distributed/c10d/ProcessGroupNCCL.hpp>
#endif

namespace posgeom::runtime {
namespace {

using Milliseconds = std::chrono::milliseconds;
constexpr Milliseconds kPoll{50};
constexpr const char* kAnyFailedKey = "failed/any";  // set beside a failed rank's word: one check a collective
constexpr Milliseconds kWordGrace{3000};  // how long a survivor waits for a failed rank's word
constexpr Milliseconds kJoinMargin{2000};  // past the timeout, a rendezvous that did not answer is given up
constexpr int64_t kMostRanksJoined = int64_t{1} << 31;  // more is not a count of ranks but another protocol's bytes

std::string firstLine(const std::string& s) { return s.substr(0, s.find('\n')); }

std::string ranksText(const std::vector<int>& ranks) {
  std::string s = ranks.size() == 1 ? "rank " : "ranks ";
  for (std::size_t i = 0; i < ranks.size(); ++i) s += (i ? ", " : "") + std::to_string(ranks[i]);
  return s;
}

std::string asString(const std::vector<uint8_t>& bytes) { return {bytes.begin(), bytes.end()}; }
std::vector<uint8_t> asBytes(const std::string& s) { return {s.begin(), s.end()}; }

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

  static std::string key(const char* what, int rank) { return std::string(what) + "/" + std::to_string(rank); }
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

// The rendezvous, waited for within the timeout and a margin, and ended by SIGINT/SIGTERM.
std::shared_ptr<Meeting> meet(const Launch& launch, Milliseconds timeout) {
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

struct RankGroup::Impl {
  Launch launch;
  Milliseconds timeout;
  DeviceSpec device;
  c10::intrusive_ptr<c10d::Store> store;
#ifdef POSGEOM_HAVE_NCCL
  c10::intrusive_ptr<c10d::ProcessGroupNCCL> nccl;
#endif
#ifdef POSGEOM_HAVE_GLOO
  c10::intrusive_ptr<c10d::ProcessGroupGloo> gloo;
#endif
  bool hosts_store = false;
  bool failed = false;  // announced, or lost a peer: no more collectives
  std::string backend;

  bool has(const std::string& key) const { return store->check({key}); }
  std::string key(const char* what, int rank) const { return Meeting::key(what, rank); }

  void connect() {
    const auto meeting = meet(launch, timeout);
    store = meeting->store;
    hosts_store = meeting->hosts_store;
  }

  void createGroup() {
#ifdef POSGEOM_HAVE_NCCL
    if (device.isCuda()) {
      auto options = c10d::ProcessGroupNCCL::Options::create();
      options->timeout = timeout;
      nccl = c10::make_intrusive<c10d::ProcessGroupNCCL>(c10::make_intrusive<c10d::PrefixStore>("nccl", store),
                                                         launch.rank, launch.world, options);
      backend = "nccl";
      return;
    }
#endif
#ifdef POSGEOM_HAVE_GLOO
    auto options = c10d::ProcessGroupGloo::Options::create(timeout);
    const char* interface = std::getenv("GLOO_SOCKET_IFNAME");
    options->devices.push_back(interface && *interface ? c10d::ProcessGroupGloo::createDeviceForInterface(interface)
                                                       : c10d::ProcessGroupGloo::createDefaultDevice());
    gloo = c10::make_intrusive<c10d::ProcessGroupGloo>(c10::make_intrusive<c10d::PrefixStore>("gloo", store), launch.rank,
                                                       launch.world, options);
    backend = "gloo";
#else
    throw InputError("--device", std::string("this LibTorch has no Gloo process group for ranks on the CPU") +
                                     (cudaBuild() ? ": run the ranks with --device cuda (NCCL)" : ""));
#endif
  }

  // Tensors where the backend takes them: the rank's GPU for NCCL, else as they are.
  at::Tensor onBackend(const at::Tensor& t) const {
    const int gpu = launch.local_rank % std::max(1, cudaDeviceCount());
    return backend == "nccl" ? t.to(torchDevice(DeviceSpec{DeviceSpec::Kind::kCuda, gpu})) : t;
  }

  template <typename Call>
  void collective(const char* what, Call call) {
    if (failed) throw RankFailed("rank " + std::to_string(launch.rank) + ": the group already failed", kRankLostExitCode);
    try {
      // A rank that failed has said so: a collective with it would only wait until the
      // backend notices, which need not be at once (a reset peer's connections may stay
      // open), and rank 0, serving the store, may be gone by then.
      if (has(kAnyFailedKey)) throw std::runtime_error("a rank announced its failure");
#ifdef POSGEOM_HAVE_NCCL
      if (nccl) {
        call(*nccl)->wait();
        return;
      }
#endif
#ifdef POSGEOM_HAVE_GLOO
      if (gloo) {
        call(*gloo)->wait();
        return;
      }
#endif
      throw std::logic_error("no process group");
    } catch (const RankFailed&) {
      throw;
    } catch (const std::exception& e) {
      lost(what, e.what());
    }
  }

  // A collective failed: a rank that failed left its reason; if none did, the ranks that
  // are neither failed nor here to say so were lost.
  [[noreturn]] void lost(const char* during, const std::string& cause) {
    failed = true;
    try {
      const auto grace = std::chrono::steady_clock::now() + kWordGrace;
      do {
        for (int r = 0; r < launch.world; ++r) {
          if (r == launch.rank || !has(key("failed", r))) continue;
          const auto word = asString(store->get(key("failed", r)));
          store->set(key("seen", launch.rank), asBytes("1"));
          const auto newline = word.find('\n');
          throw RankFailed("rank " + std::to_string(r) + " failed: " + word.substr(newline + 1),
                           std::atoi(word.substr(0, newline).c_str()));
        }
        std::this_thread::sleep_for(kPoll);
      } while (std::chrono::steady_clock::now() < grace);
      store->set(key("alive", launch.rank), asBytes("1"));
      std::vector<int> missing;
      const auto deadline = std::chrono::steady_clock::now() + kWordGrace;
      do {
        missing.clear();
        for (int r = 0; r < launch.world; ++r)
          if (r != launch.rank && !has(key("alive", r)) && !has(key("failed", r))) missing.push_back(r);
        if (!missing.empty()) std::this_thread::sleep_for(kPoll);
      } while (!missing.empty() && std::chrono::steady_clock::now() < deadline);
      throw RankFailed(
          (missing.empty() ? std::string("a rank") : ranksText(missing)) + " stopped answering during " + during +
              " (killed, hung past --dist-timeout, or its machine lost): " + firstLine(cause),
          kRankLostExitCode);
    } catch (const RankFailed&) {
      throw;
    } catch (const std::exception&) {
      throw RankFailed(std::string("rank 0, which serves the rendezvous, stopped answering during ") + during + ": " +
                           firstLine(cause),
                       kRankLostExitCode);
    }
  }
};

RankGroup::RankGroup(const Launch& launch, Milliseconds timeout, const DeviceSpec& device)
    : impl_(std::make_unique<Impl>()) {
  impl_->launch = launch;
  impl_->timeout = timeout;
  impl_->device = device;
  impl_->connect();
  impl_->createGroup();
  log::info("joined as " + launch.describe() + ", " + impl_->backend + ", timeout " + std::to_string(timeout.count() / 1000) +
            " s");
}

RankGroup::~RankGroup() = default;

const Launch& RankGroup::launch() const { return impl_->launch; }
std::string RankGroup::backend() const { return impl_->backend; }
Milliseconds RankGroup::timeout() const { return impl_->timeout; }

std::vector<int64_t> RankGroup::sumAll(const std::vector<int64_t>& values) {
  at::Tensor t = impl_->onBackend(at::tensor(values, at::kLong));
  std::vector<at::Tensor> tensors{t};
  impl_->collective("a step's agreement", [&](auto& group) { return group.allreduce(tensors); });
  const at::Tensor sums = tensors[0].cpu();
  return {sums.data_ptr<int64_t>(), sums.data_ptr<int64_t>() + sums.numel()};
}

void RankGroup::sumToRoot(double* data, int64_t count) {
  if (count == 0) return;
  const at::Tensor host = at::from_blob(data, {count}, at::kDouble);
  std::vector<at::Tensor> tensors{impl_->onBackend(host)};
  c10d::ReduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  options.rootRank = 0;
  impl_->collective("the sums' reduction", [&](auto& group) { return group.reduce(tensors, options); });
  if (root() && !tensors[0].is_same(host)) host.copy_(tensors[0]);
}

void RankGroup::broadcastFromRoot(double* data, int64_t count) {
  if (count == 0) return;
  const at::Tensor host = at::from_blob(data, {count}, at::kDouble);
  std::vector<at::Tensor> tensors{impl_->onBackend(host)};
  c10d::BroadcastOptions options;
  options.rootRank = 0;
  impl_->collective("the saved state's broadcast", [&](auto& group) { return group.broadcast(tensors, options); });
  if (!tensors[0].is_same(host)) host.copy_(tensors[0]);
}

std::vector<std::string> RankGroup::gatherAll(const std::string& mine) {
  const int world = this->world();
  const auto lengths = [&] {
    std::vector<int64_t> one(static_cast<std::size_t>(world), 0);
    one[static_cast<std::size_t>(rank())] = static_cast<int64_t>(mine.size());
    return sumAll(one);
  }();
  const int64_t longest = std::max<int64_t>(1, *std::max_element(lengths.begin(), lengths.end()));
  at::Tensor bytes = at::zeros({longest}, at::kByte);
  std::copy(mine.begin(), mine.end(), bytes.data_ptr<uint8_t>());
  std::vector<at::Tensor> inputs{impl_->onBackend(bytes)};
  std::vector<std::vector<at::Tensor>> outputs(1);
  for (int r = 0; r < world; ++r) outputs[0].push_back(at::empty_like(inputs[0]));
  impl_->collective("an exchange of run data", [&](auto& group) { return group.allgather(outputs, inputs); });
  std::vector<std::string> all;
  for (int r = 0; r < world; ++r) {
    const at::Tensor b = outputs[0][static_cast<std::size_t>(r)].cpu();
    all.emplace_back(reinterpret_cast<const char*>(b.data_ptr<uint8_t>()), static_cast<std::size_t>(lengths[static_cast<std::size_t>(r)]));
  }
  return all;
}

std::string RankGroup::broadcastFromRoot(const std::string& value) {
  return gatherAll(root() ? value : std::string())[0];
}

void RankGroup::announceFailure(int exit_code, const std::string& message) noexcept {
  auto& impl = *impl_;
  if (impl.failed) return;
  impl.failed = true;
  try {
    impl.store->set(impl.key("failed", rank()), asBytes(std::to_string(exit_code) + "\n" + firstLine(message)));
    impl.store->set(kAnyFailedKey, asBytes(std::to_string(rank())));
    impl.has(impl.key("failed", rank()));  // a round trip: the word is in before the connections close
#ifdef POSGEOM_HAVE_GLOO
    impl.gloo.reset();
#endif
#ifdef POSGEOM_HAVE_NCCL
    impl.nccl.reset();
#endif
    if (!impl.hosts_store) return;
    // The store goes with this process: wait until every other rank has read the word, or
    // said it is there, or failed itself.
    const auto deadline = std::chrono::steady_clock::now() + impl.timeout;
    for (int r = 1; r < world(); ++r)
      while (!impl.has(impl.key("seen", r)) && !impl.has(impl.key("alive", r)) && !impl.has(impl.key("failed", r)) &&
             std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(kPoll);
  } catch (const std::exception&) {
    // Nothing more to do: the others find this rank gone.
  }
}

namespace {
std::mutex group_mutex;
std::unique_ptr<RankGroup> process_group;
}  // namespace

RankGroup* joinRanks(const std::string& dist_init, Milliseconds timeout, const DeviceSpec& device) {
  const std::lock_guard<std::mutex> lock(group_mutex);
  if (process_group) return process_group.get();
  const Launch launch = detectLaunch(processEnv(), dist_init);
  if (!launch.distributed()) return nullptr;
  if (device.isCuda() && device.index >= 0)
    throw InputError("--device", "names one GPU, but each rank of a distributed run takes cuda:LOCAL_RANK: give --device cuda");
  process_group = std::make_unique<RankGroup>(launch, timeout, device);
  return process_group.get();
}

RankGroup* currentRanks() {
  const std::lock_guard<std::mutex> lock(group_mutex);
  return process_group.get();
}

void announceFailureToRanks(int exit_code, const std::string& message) noexcept {
  if (auto* group = currentRanks()) group->announceFailure(exit_code, message);
}

}  // namespace posgeom::runtime
