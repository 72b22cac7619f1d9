#include "posgeom/jobs/train_job.h"

#include <sstream>

#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// A tiny character model's config: 4 steps into "from-config", evaluated every 2.
fs::path tinyConfig(const ScratchDir& s) {
  std::string text;
  for (int i = 0; i < 200; ++i) text += "the quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + "\n";
  writeFile(s / "corpus.txt", text);
  writeFile(s / "t.toml", "[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n[data]\ncorpus = \"corpus.txt\"\n"
                          "[optim]\niterations = 4\nbatch_size = 4\nwarmup = 1\n"
                          "[run]\neval_interval = 2\neval_batches = 1\nout = \"" + (s / "from-config").string() + "\"\n");
  return s / "t.toml";
}

TEST(TrainJob, TheCommandLineOverridesTheConfig) {
  ScratchDir s;
  jobs::TrainJob job;
  job.config = tinyConfig(s);
  job.out = s / "o";
  job.iterations = 6;
  job.save_every = 3;
  job.options.stop_after = 1;
  std::ostringstream said;
  jobs::runTrainJob(job, said);
  EXPECT_EQ(said.str(), "trained 1 steps into " + (s / "o").string() + " (not evaluated yet: the first evaluation is at step 2)\n");
  EXPECT_FALSE(fs::exists(s / "from-config"));
  const auto config = io::readJsonFile(s / "o/train_config.json");
  EXPECT_EQ(config["optim"]["iterations"], 6);
  EXPECT_EQ(config["run"]["save_every"], 3);
}

TEST(TrainJob, WithoutOverridesTheConfigDecidesAndTheLastLossIsSaid) {
  ScratchDir s;
  jobs::TrainJob job;
  job.config = tinyConfig(s);
  std::ostringstream said;
  jobs::runTrainJob(job, said);
  EXPECT_EQ(said.str().rfind("trained 4 steps into " + (s / "from-config").string() + " (final validation loss ", 0), 0u)
      << said.str();
  EXPECT_EQ(io::readJsonFile(s / "from-config/training.json")["steps"], 4);
  EXPECT_FALSE(fs::exists(s / "from-config/step_2"));
}

}  // namespace
}  // namespace posgeom::testing
