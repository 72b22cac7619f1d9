#include "posgeom/runtime/launch.h"

#include <charconv>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"

namespace posgeom::runtime {
namespace {

// A whole non-negative number of at most `max`, or InputError naming the variable.
int numberIn(const EnvLookup& env, const char* name, int max, bool required) {
  const auto text = env(name);
  if (!text) {
    if (required) throw InputError(name, "is not set (the launcher sets it beside the others it did set)");
    return 0;
  }
  int value = -1;
  const auto* end = text->data() + text->size();
  const auto [ptr, ec] = std::from_chars(text->data(), end, value);
  if (ec != std::errc() || ptr != end || value < 0 || value > max)
    throw InputError(name, "'" + *text + "' is not a number from 0 to " + std::to_string(max));
  return value;
}

constexpr int kMaxRanks = 1 << 20;
constexpr int kDefaultPort = 29500;  // torch.distributed's

std::string portOf(const EnvLookup& env, int fallback) {
  const int port = env("MASTER_PORT") ? numberIn(env, "MASTER_PORT", 65535, true) : fallback;
  if (port == 0) throw InputError("MASTER_PORT", "must be a port from 1 to 65535");
  return std::to_string(port);
}

bool hasScheme(const std::string& s, const std::string& scheme) { return s.rfind(scheme, 0) == 0; }

}  // namespace

std::string Launch::describe() const {
  return "rank " + std::to_string(rank) + " of " + std::to_string(world) + " (" + launcher + ", " + rendezvous + ")";
}

void validateDistInit(const std::string& dist_init) {
  if (dist_init == "env" || dist_init == "none") return;
  if (hasScheme(dist_init, "file://")) {
    if (dist_init.size() == 7) throw InputError(option::kDistInit, "file:// needs a path: file:///shared/dir/rendezvous");
    return;
  }
  if (hasScheme(dist_init, "tcp://")) {
    const auto hostport = dist_init.substr(6);
    const auto colon = hostport.rfind(':');
    int port = 0;
    const auto* end = hostport.data() + hostport.size();
    if (colon == std::string::npos || colon == 0 ||
        std::from_chars(hostport.data() + colon + 1, end, port).ptr != end || port < 1 || port > 65535)
      throw InputError(option::kDistInit, "'" + dist_init + "' is not tcp://HOST:PORT with a port from 1 to 65535");
    return;
  }
  throw InputError(option::kDistInit, "'" + dist_init + "' is not env, none, tcp://HOST:PORT or file://PATH");
}

std::string firstHost(const std::string& host_list) {
  const auto stop = host_list.find_first_of(",[");
  if (stop == std::string::npos || host_list[stop] == ',') return host_list.substr(0, stop);
  // prefix[first-range...]suffix: the first number of the first range, kept as written
  // (its leading zeros are the host name's).
  const auto close = host_list.find(']', stop);
  if (close == std::string::npos) throw InputError("SLURM_STEP_NODELIST", "'" + host_list + "' has an unclosed '['");
  const auto range = host_list.substr(stop + 1, close - stop - 1);
  const auto first = range.substr(0, range.find_first_of(",-"));
  const auto rest = host_list.substr(close + 1);
  return host_list.substr(0, stop) + first + (rest.empty() || rest[0] == ',' ? "" : firstHost(rest));
}

Launch detectLaunch(const EnvLookup& env, const std::string& dist_init) {
  validateDistInit(dist_init);
  Launch launch;
  if (dist_init == "none") return launch;
  if (env("WORLD_SIZE") || env("RANK")) {
    launch.launcher = "torchrun";
    launch.world = numberIn(env, "WORLD_SIZE", kMaxRanks, true);
    launch.rank = numberIn(env, "RANK", kMaxRanks, true);
    launch.local_rank = numberIn(env, "LOCAL_RANK", kMaxRanks, false);
    launch.attempt = numberIn(env, "TORCHELASTIC_RESTART_COUNT", kMaxRanks, false);
    if (dist_init == "env") {
      launch.rendezvous = "tcp://" + env("MASTER_ADDR").value_or("127.0.0.1") + ":" + portOf(env, kDefaultPort);
      // torchrun (PyTorch >= 2.2) serves the workers' store from its agent and says so.
      launch.agent_store = env("TORCHELASTIC_USE_AGENT_STORE").value_or("") == "True";
    }
  } else if (env("SLURM_PROCID") && env("SLURM_STEP_NUM_TASKS")) {
    launch.launcher = "slurm";
    launch.world = numberIn(env, "SLURM_STEP_NUM_TASKS", kMaxRanks, true);
    launch.rank = numberIn(env, "SLURM_PROCID", kMaxRanks, true);
    launch.local_rank = numberIn(env, "SLURM_LOCALID", kMaxRanks, false);
    if (dist_init == "env") {
      const auto nodes = env("SLURM_STEP_NODELIST") ? env("SLURM_STEP_NODELIST") : env("SLURM_JOB_NODELIST");
      const std::string host = env("MASTER_ADDR").value_or(nodes ? firstHost(*nodes) : "127.0.0.1");
      // A port per job, so that two jobs sharing a node do not meet: MASTER_PORT overrides.
      const int job = env("SLURM_JOB_ID") ? numberIn(env, "SLURM_JOB_ID", 1 << 30, true) : 0;
      launch.rendezvous = "tcp://" + host + ":" + portOf(env, 20000 + job % 20000);
    }
  } else {
    return launch;
  }
  if (launch.world < 1) throw InputError(launch.launcher == "slurm" ? "SLURM_STEP_NUM_TASKS" : "WORLD_SIZE", "must be at least 1");
  if (launch.rank >= launch.world)
    throw InputError(launch.launcher == "slurm" ? "SLURM_PROCID" : "RANK",
                     std::to_string(launch.rank) + " is not below the world size " + std::to_string(launch.world));
  if (dist_init != "env") launch.rendezvous = dist_init;
  if (!launch.distributed()) launch = Launch{};  // a world of one is the single-process path
  return launch;
}

}  // namespace posgeom::runtime
