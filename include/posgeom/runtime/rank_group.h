#pragma once
// The ranks of a distributed run, joined with c10d (the library under torch.distributed):
// a TCPStore or FileStore to meet and to leave word of a failure, and a process group
// (Gloo on the CPU, NCCL for CUDA where the LibTorch has it) for the collectives. Every
// collective ends within the group's timeout: when a peer failed (it left its reason in
// the store), stopped answering or was killed, it throws RankFailed naming the rank.
// Torch-free header: c10d stays in the implementation.
#include <chrono>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "posgeom/runtime/device.h"
#include "posgeom/runtime/launch.h"

namespace posgeom::runtime {

// Another rank failed or was lost; what() names it and the cause. Exit code: the failed
// rank's own (2 for bad input), or 4 when a rank was lost without a word (killed, hung).
class RankFailed : public std::runtime_error {
 public:
  RankFailed(const std::string& what, int exit_code) : std::runtime_error(what), exit_code_(exit_code) {}
  int exitCode() const { return exit_code_; }

 private:
  int exit_code_;
};
constexpr int kRankLostExitCode = 4;

constexpr std::chrono::seconds kDefaultRankTimeout{600};

class RankGroup {
 public:
  // The rendezvous: every rank of the launch meets every other one within `timeout`, else
  // RankFailed naming the ranks that did not come, or (a margin later) the rendezvous that
  // did not answer: another program on its port. InputError for one that answers in
  // another protocol; RunStopped on SIGINT/SIGTERM while waiting.
  RankGroup(const Launch& launch, std::chrono::milliseconds timeout, const DeviceSpec& device);
  ~RankGroup();
  RankGroup(const RankGroup&) = delete;
  RankGroup& operator=(const RankGroup&) = delete;

  const Launch& launch() const;
  int rank() const { return launch().rank; }
  int world() const { return launch().world; }
  bool root() const { return rank() == 0; }
  std::string backend() const;  // "gloo" | "nccl"
  std::chrono::milliseconds timeout() const;

  // Element-wise sums over the ranks, on every rank (small: flags and counts).
  std::vector<int64_t> sumAll(const std::vector<int64_t>& values);
  // data[0, count) summed over the ranks into rank 0's buffer, in float64; the other
  // ranks' buffers are left unspecified.
  void sumToRoot(double* data, int64_t count);
  // The same, element-wise maxima (exact: no rounding).
  void maxToRoot(double* data, int64_t count);
  // Rank 0's data[0, count) into every rank's buffer.
  void broadcastFromRoot(double* data, int64_t count);
  // Every rank's bytes, indexed by rank, on every rank.
  std::vector<std::string> gatherAll(const std::string& mine);
  // Rank 0's bytes on every rank.
  std::string broadcastFromRoot(const std::string& value);

  // This rank is about to exit on an error: its reason goes into the store for the others'
  // next collective, and its connections close so that they do not wait for it. The rank
  // that serves the TCPStore then waits (within the timeout) until the others have read it.
  // After this, the group takes no more collectives.
  void announceFailure(int exit_code, const std::string& message) noexcept;

 private:
  void reduceToRoot(double* data, int64_t count, bool maximum, const char* what);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The process's group: joined on the first call when the environment (or --dist-init)
// says this is one rank of several, the same group on later calls (batch's runs), and
// nullptr for a single process, which then does nothing distributed at all.
RankGroup* joinRanks(const std::string& dist_init, std::chrono::milliseconds timeout, const DeviceSpec& device);
RankGroup* currentRanks();
// For the command line's error handlers: announceFailure on the process's group, if any.
void announceFailureToRanks(int exit_code, const std::string& message) noexcept;

}  // namespace posgeom::runtime
