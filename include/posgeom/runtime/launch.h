#pragma once
// How this process was started: alone, or as one rank of a distributed run that torchrun
// or SLURM's srun launched (read from their environment variables), and where the ranks
// meet. Torch-free: the rendezvous itself is rank_group's.
#include <string>

#include "posgeom/base/environment.h"

namespace posgeom::runtime {

struct Launch {
  std::string launcher = "none";  // "torchrun" | "slurm" | "none"
  int rank = 0;
  int world = 1;
  int local_rank = 0;  // the rank's index on its machine: its GPU with --device cuda
  // Where the ranks meet: "tcp://HOST:PORT" (a TCPStore, rank 0's unless the launcher's
  // agent hosts one) or "file://PATH" (a FileStore on a shared file system).
  std::string rendezvous;
  bool agent_store = false;  // torchrun's agent already serves the TCPStore at HOST:PORT
  int attempt = 0;           // torchrun's restart count: each attempt meets under its own keys

  bool distributed() const { return world > 1; }
  std::string describe() const;  // "rank 1 of 3 (torchrun, tcp://127.0.0.1:29500)"
};

// --dist-init: "env" (the launcher's variables: torchrun's MASTER_ADDR/MASTER_PORT, or
// SLURM's first host), "tcp://HOST:PORT", "file://PATH", or "none" (one process whatever
// the environment says). Syntax only; InputError naming --dist-init.
void validateDistInit(const std::string& dist_init);

// Torchrun's RANK/WORLD_SIZE/LOCAL_RANK first, then srun's SLURM_PROCID/SLURM_STEP_NUM_TASKS/
// SLURM_LOCALID (a batch script itself, outside srun, has no step task count and runs
// alone). InputError naming the variable when one is set but not a number in range.
Launch detectLaunch(const EnvLookup& env, const std::string& dist_init = "env");

// The first host of a SLURM host list: "gpu[07-09,12],login1" -> "gpu07".
std::string firstHost(const std::string& host_list);

}  // namespace posgeom::runtime
