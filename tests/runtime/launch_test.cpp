#include "posgeom/runtime/launch.h"

#include <gtest/gtest.h>

#include <map>

#include "posgeom/base/error.h"

namespace posgeom::runtime {
namespace {

EnvLookup fakeEnv(const std::map<std::string, std::string>& vars) {
  return [vars](const char* key) -> std::optional<std::string> {
    const auto it = vars.find(key);
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

TEST(Launch, NoLauncherIsOneProcess) {
  const auto l = detectLaunch(fakeEnv({{"HOME", "/root"}}));
  EXPECT_FALSE(l.distributed());
  EXPECT_EQ(l.launcher, "none");
  EXPECT_EQ(l.world, 1);
}

TEST(Launch, TorchrunsVariables) {
  const auto l = detectLaunch(fakeEnv({{"RANK", "2"}, {"WORLD_SIZE", "4"}, {"LOCAL_RANK", "0"}, {"MASTER_ADDR", "node7"},
                                       {"MASTER_PORT", "29400"}, {"TORCHELASTIC_USE_AGENT_STORE", "True"},
                                       {"TORCHELASTIC_RESTART_COUNT", "3"}}));
  EXPECT_TRUE(l.distributed());
  EXPECT_EQ(l.launcher, "torchrun");
  EXPECT_EQ(l.rank, 2);
  EXPECT_EQ(l.world, 4);
  EXPECT_EQ(l.local_rank, 0);
  EXPECT_EQ(l.rendezvous, "tcp://node7:29400");
  EXPECT_TRUE(l.agent_store);
  EXPECT_EQ(l.attempt, 3);  // a restarted worker group meets under new keys of the agent's store
  EXPECT_EQ(l.describe(), "rank 2 of 4 (torchrun, tcp://node7:29400)");
}

TEST(Launch, AWorldOfOneIsTheSingleProcessPath) {
  EXPECT_FALSE(detectLaunch(fakeEnv({{"RANK", "0"}, {"WORLD_SIZE", "1"}})).distributed());
}

TEST(Launch, SrunsVariablesWithTheFirstNodeAsRendezvous) {
  const auto l = detectLaunch(fakeEnv({{"SLURM_PROCID", "5"}, {"SLURM_STEP_NUM_TASKS", "8"}, {"SLURM_LOCALID", "1"},
                                       {"SLURM_STEP_NODELIST", "gpu[07-09,12]"}, {"SLURM_JOB_ID", "123456"}}));
  EXPECT_EQ(l.launcher, "slurm");
  EXPECT_EQ(l.rank, 5);
  EXPECT_EQ(l.world, 8);
  EXPECT_EQ(l.local_rank, 1);
  EXPECT_EQ(l.rendezvous, "tcp://gpu07:" + std::to_string(20000 + 123456 % 20000));
  EXPECT_FALSE(l.agent_store);
  // MASTER_ADDR and MASTER_PORT win where given.
  EXPECT_EQ(detectLaunch(fakeEnv({{"SLURM_PROCID", "0"}, {"SLURM_STEP_NUM_TASKS", "2"}, {"MASTER_ADDR", "head"},
                                  {"MASTER_PORT", "4000"}, {"SLURM_STEP_NODELIST", "n1,n2"}}))
                .rendezvous,
            "tcp://head:4000");
}

// sbatch's script itself has SLURM_PROCID and SLURM_NTASKS but no step task count: it runs
// alone (it would otherwise wait for ranks that srun never started).
TEST(Launch, ABatchScriptOutsideSrunRunsAlone) {
  EXPECT_FALSE(detectLaunch(fakeEnv({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}, {"SLURM_JOB_NODELIST", "n[1-4]"}})).distributed());
}

TEST(Launch, DistInitChoosesTheRendezvousOrNone) {
  const auto env = fakeEnv({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(detectLaunch(env, "file:///shared/run1").rendezvous, "file:///shared/run1");
  EXPECT_EQ(detectLaunch(env, "tcp://10.0.0.1:1234").rendezvous, "tcp://10.0.0.1:1234");
  EXPECT_EQ(detectLaunch(env).rendezvous, "tcp://127.0.0.1:29500");
  EXPECT_FALSE(detectLaunch(env, "none").distributed());
}

TEST(Launch, BadValuesNameTheVariableOrOption) {
  auto message = [](const std::map<std::string, std::string>& vars, const std::string& init = "env") {
    try {
      detectLaunch(fakeEnv(vars), init);
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_EQ(message({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).rfind("RANK: 'x' is not a number", 0), 0u);
  EXPECT_EQ(message({{"RANK", "2"}, {"WORLD_SIZE", "2"}}), "RANK: 2 is not below the world size 2");
  EXPECT_EQ(message({{"RANK", "0"}}).rfind("WORLD_SIZE: is not set", 0), 0u);
  EXPECT_EQ(message({{"RANK", "0"}, {"WORLD_SIZE", "0"}}), "WORLD_SIZE: must be at least 1");
  EXPECT_EQ(message({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}}).rfind("MASTER_PORT:", 0), 0u);
  EXPECT_EQ(message({{"SLURM_PROCID", "3"}, {"SLURM_STEP_NUM_TASKS", "2"}}), "SLURM_PROCID: 3 is not below the world size 2");
  for (const std::string bad : {"tcp://host", "tcp://:80", "tcp://h:0", "file://", "mpi://x", ""})
    EXPECT_EQ(message({}, bad).rfind("--dist-init: ", 0), 0u) << bad << ": " << message({}, bad);
}

TEST(Launch, FirstHostOfASlurmHostList) {
  EXPECT_EQ(firstHost("node1"), "node1");
  EXPECT_EQ(firstHost("a1,a2"), "a1");
  EXPECT_EQ(firstHost("gpu[07-09,12],login1"), "gpu07");
  EXPECT_EQ(firstHost("n[3,1]-ib"), "n3-ib");
  EXPECT_EQ(firstHost("rack[2-3]n[01-04]"), "rack2n01");
  EXPECT_THROW(firstHost("n[1-2"), InputError);
}

}  // namespace
}  // namespace posgeom::runtime
