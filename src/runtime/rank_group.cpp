#include "posgeom/runtime/rank_group.h"

#include <torch/csrc/distributed/c10d/PrefixStore.hpp>

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
#include "posgeom/base/option_names.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/runtime/torch_device.h"
#include "rendezvous.h"

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
using rendezvous::asBytes;
using rendezvous::asString;
using rendezvous::firstLine;
using rendezvous::kPoll;
using rendezvous::ranksText;
constexpr const char* kAnyFailedKey = "failed/any";  // set beside a failed rank's word: one check a collective
constexpr Milliseconds kWordGrace{3000};  // how long a survivor waits for a failed rank's word

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
  std::string key(const char* what, int rank) const { return rendezvous::key(what, rank); }

  void connect() {
    auto joined = rendezvous::meet(launch, timeout);
    store = std::move(joined.store);
    hosts_store = joined.hosts_store;
  }

  void createGroup() {
#ifdef POSGEOM_HAVE_NCCL
    if (device.isCuda()) {
      // The rank's own GPU before NCCL's first CUDA call: else every rank's context is on GPU 0.
      selectCudaDevice(DeviceSpec{DeviceSpec::Kind::kCuda, launch.local_rank % std::max(1, cudaDeviceCount())});
      // A lost rank must surface as the lost-rank line and exit 4 within --dist-timeout: by
      // default NCCL's wait() only orders streams (the host then hangs in the next copy) and
      // its watchdog aborts the process (134) at the timeout. Blocking waits throw there
      // instead, and clean-up-only error handling leaves the process to say so. A user's
      // own settings win. (Not yet run on a GPU: two ranks need two GPUs.)
      setenv("TORCH_NCCL_BLOCKING_WAIT", "1", 0);
      setenv("TORCH_NCCL_ASYNC_ERROR_HANDLING", "2", 0);
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
    throw InputError(option::kDevice, std::string("this LibTorch has no Gloo process group for ranks on the CPU") +
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
  // A peer that is gone closes its sockets, and a write to one (Gloo's writev takes no
  // MSG_NOSIGNAL) raised SIGPIPE: CI saw a rank die silently with 141 while the ranks all
  // refused a resume. Ignored, as Python does for torch.distributed, the write fails and the
  // rank says what happened with its own line and exit code.
  std::signal(SIGPIPE, SIG_IGN);
  impl_->launch = launch;
  impl_->timeout = timeout;
  impl_->device = device;
  impl_->connect();
  try {
    impl_->createGroup();
  } catch (const InputError&) {
    throw;
  } catch (const std::exception& e) {
    // A rank that failed before this one had connected closes its connections while they
    // are made (CI saw Gloo's "Connection closed by peer"): its word names why.
    impl_->lost("the group's connection", e.what());
  }
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

void RankGroup::reduceToRoot(double* data, int64_t count, bool maximum, const char* what) {
  if (count == 0) return;
  const at::Tensor host = at::from_blob(data, {count}, at::kDouble);
  std::vector<at::Tensor> tensors{impl_->onBackend(host)};
  c10d::ReduceOptions options;
  options.reduceOp = maximum ? c10d::ReduceOp::MAX : c10d::ReduceOp::SUM;
  options.rootRank = 0;
  impl_->collective(what, [&](auto& group) { return group.reduce(tensors, options); });
  if (root() && !tensors[0].is_same(host)) host.copy_(tensors[0]);
}

void RankGroup::sumToRoot(double* data, int64_t count) { reduceToRoot(data, count, false, "the sums' reduction"); }

void RankGroup::maxToRoot(double* data, int64_t count) { reduceToRoot(data, count, true, "the maxima's reduction"); }

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
    throw InputError(option::kDevice, "names one GPU, but each rank of a distributed run takes cuda:LOCAL_RANK: give --device cuda");
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
