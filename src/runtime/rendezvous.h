#pragma once
// The ranks' meeting at the rendezvous, RankGroup's first step: the c10d store every rank
// reaches, joined within the timeout (and a margin) on a thread of its own, so that a
// program on the port that never answers cannot hold a rank for ever. Private to runtime.
#include <torch/csrc/distributed/c10d/Store.hpp>

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "posgeom/runtime/launch.h"

namespace posgeom::runtime::rendezvous {

using Milliseconds = std::chrono::milliseconds;
inline constexpr Milliseconds kPoll{50};  // how often a wait on the store looks again

struct Joined {
  c10::intrusive_ptr<c10d::Store> store;  // under this launch's attempt's prefix
  bool hosts_store = false;               // rank 0 serving a tcp:// rendezvous
};

// Every rank of `launch` joined: RankFailed naming who did not come or what did not
// answer, InputError for a port another program holds, RunStopped on SIGINT/SIGTERM.
Joined meet(const Launch& launch, Milliseconds timeout);

// The store key of `what` for `rank` ("here/3", "failed/1").
std::string key(const char* what, int rank);
std::string firstLine(const std::string& s);
std::string ranksText(const std::vector<int>& ranks);  // "rank 1", "ranks 1, 2"
std::string asString(const std::vector<uint8_t>& bytes);
std::vector<uint8_t> asBytes(const std::string& s);

}  // namespace posgeom::runtime::rendezvous
