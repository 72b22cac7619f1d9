#pragma once
// The ranks of a distributed run as threads of one test process: each its own group (a
// store client, its Gloo connections) over a rendezvous on loopback.
#include <chrono>
#include <functional>
#include <string>
#include <vector>

#include "posgeom/runtime/rank_group.h"

namespace posgeom::testing {

struct RankOutcome {
  bool failed = false;
  int exit_code = 0;  // RankFailed's; -1 for any other exception
  std::string message;
};

// Runs `body` on `world` ranks (but not those in `absent`) and returns what each threw.
// Rank r is local rank r: on `device` cuda each takes its own GPU and NCCL.
std::vector<RankOutcome> runRankThreads(int world, const std::string& rendezvous, std::chrono::milliseconds timeout,
                                        const std::function<void(runtime::RankGroup&)>& body, const std::vector<int>& absent = {},
                                        const runtime::DeviceSpec& device = {});
// A fresh tcp:// rendezvous on loopback.
std::string loopbackRendezvous();

}  // namespace posgeom::testing
