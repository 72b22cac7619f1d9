// posgeom train and eval-addition as a user runs them: the --out policy, the lock, and
// what a signal prints.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <thread>

#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// A tiny character model on a generated text, `iterations` long, a checkpoint every 5 steps.
fs::path tinyTrainConfig(const ScratchDir& s, int iterations) {
  std::string text;
  for (int i = 0; i < 300; ++i) text += "the quick brown fox jumps over the lazy dog " + std::to_string(i % 7) + "\n";
  writeFile(s / "corpus.txt", text);
  writeFile(s / "t.toml", "[model]\nlayers = 1\nheads = 2\nwidth = 16\ncontext = 16\n[data]\ncorpus = \"corpus.txt\"\n"
                          "[optim]\niterations = " + std::to_string(iterations) + "\nbatch_size = 4\nwarmup = 2\n"
                          "[run]\neval_interval = 1000\neval_batches = 1\ncheckpoint_interval = 5\n");
  return s / "t.toml";
}

std::vector<std::string> train(const fs::path& config, const fs::path& out, std::vector<std::string> more = {}) {
  std::vector<std::string> args{"--threads", "1", "-q", "train", "--config", config.string(), "--out", out.string()};
  args.insert(args.end(), more.begin(), more.end());
  return args;
}

void waitFor(const fs::path& path) {
  for (int i = 0; i < 12000 && !fs::exists(path); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(fs::exists(path)) << path;
}

// SIGINT used to exit 130 after the last "step N" line, with no word on how to go on; a
// second run on the same --out used to train beside the first (both exit 0).
TEST(TrainCommand, ASignalSavesACheckpointSaysHowToResumeAndTheLockHoldsMeanwhile) {
  ScratchDir s;
  const auto config = tinyTrainConfig(s, 1000000);
  RunningProgram running(POSGEOM_BINARY, train(config, s / "o"));
  waitFor(s / "o/checkpoint.safetensors");
  const auto second = runPosgeom(train(config, s / "o", {"--force"}));
  EXPECT_EQ(second.exit_code, 2) << second.err;
  EXPECT_NE(second.err.find((s / "o").string() + ": is being written by another posgeom run (pid "), std::string::npos) << second.err;
  running.signal(SIGINT);
  const auto stopped = running.wait();
  ASSERT_EQ(stopped.exit_code, 128 + SIGINT) << stopped.err;
  const std::string said = "posgeom: stopped: SIGINT after step ";
  const auto at = stopped.err.find(said);
  ASSERT_NE(at, std::string::npos) << stopped.err;
  EXPECT_NE(stopped.err.find(" of 1000000; the checkpoint is " + (s / "o/checkpoint.safetensors").string() +
                             "; the same command with --resume continues it"),
            std::string::npos)
      << stopped.err;
  const long step = std::stol(stopped.err.substr(at + said.size()));
  EXPECT_GE(step, 5);
  // The checkpoint is of the step it names: resumed to a later step, it is the model of an
  // uninterrupted run stopped there.
  const auto until = std::to_string(step + 3);
  const auto resumed = runPosgeom(train(config, s / "o", {"--resume", "--stop-after", until}));
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  const auto fresh = runPosgeom(train(config, s / "f", {"--stop-after", until}));
  ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
  EXPECT_EQ(readFile(s / "o/model.safetensors"), readFile(s / "f/model.safetensors"));
  EXPECT_EQ(readFile(s / "o/train_log.csv"), readFile(s / "f/train_log.csv"));
  EXPECT_FALSE(fs::exists(s / ".o.posgeom-lock"));
}

// Extending a stopped run changes the decay of the steps still to come: said, not silent.
TEST(TrainCommand, ExtendingARunWarnsThatTheScheduleChanges) {
  ScratchDir s;
  const auto config = tinyTrainConfig(s, 20);
  ASSERT_EQ(runPosgeom(train(config, s / "o", {"--stop-after", "10"})).exit_code, 0);
  const auto extended = runPosgeom(train(config, s / "o", {"--resume", "--iterations", "30", "--stop-after", "11"}));
  ASSERT_EQ(extended.exit_code, 0) << extended.err;
  EXPECT_NE(extended.err.find("warning: the learning rate now decays over 30 steps, not the 20 the run was scheduled for: from "
                              "step 10 on it is not the curve of an uninterrupted run of either length"),
            std::string::npos)
      << extended.err;
}

// configs/train/default-model.toml names models/default as its out: run from the checkout
// it replaced the bundled model with a 1-step one, exit 0. Now a training run in --out is
// replaced with --force only, and a directory holding anything else never.
TEST(TrainCommand, TheDefaultModelIsReplacedOnlyWithForce) {
  ScratchDir s;
  const auto bundled = fs::path(POSGEOM_SOURCE_DIR) / "models/default";
  fs::copy(bundled, s / "default", fs::copy_options::recursive);
  const auto config = fs::path(POSGEOM_SOURCE_DIR) / "configs/train/default-model.toml";
  const auto model = readFile(s / "default/model.safetensors");
  const auto refused = runPosgeom(train(config, s / "default", {"--stop-after", "1"}));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(refused.err, "posgeom: error: " + (s / "default").string() + ": holds a training run; pass --force to replace it\n");
  EXPECT_EQ(readFile(s / "default/model.safetensors"), model);
  writeFile(s / "default/notes.txt", "mine");
  const auto foreign = runPosgeom(train(config, s / "default", {"--stop-after", "1", "--force"}));
  EXPECT_EQ(foreign.exit_code, 2) << foreign.err;
  EXPECT_NE(foreign.err.find("holds 'notes.txt', which is not a posgeom training run's file"), std::string::npos) << foreign.err;
  EXPECT_EQ(readFile(s / "default/model.safetensors"), model);
  fs::remove(s / "default/notes.txt");
  const auto forced = runPosgeom(train(config, s / "default", {"--stop-after", "1", "--force"}));
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(io::readJsonFile(s / "default/training.json")["steps"], 1);
  // Before the first evaluation there is no validation loss: not "-1".
  EXPECT_EQ(forced.out, "trained 1 steps into " + (s / "default").string() +
                            " (not evaluated yet: the first evaluation is at step 100)\n");
  EXPECT_TRUE(io::readJsonFile(s / "default/training.json")["final_validation_loss"].is_null());
}

// `--force` deleted a Hugging Face model whose files bear a training run's names
// (config.json, model.safetensors, tokenizer.json), exit 0.
TEST(TrainCommand, ForceNeverRemovesAModelPosgeomDidNotTrain) {
  ScratchDir s;
  const auto config = tinyTrainConfig(s, 2);
  const auto hf = fs::path(POSGEOM_SOURCE_DIR) / "tests/fixtures/hf/hf-gpt2";
  fs::create_directories(s / "hf2");
  for (const char* f : {"config.json", "model.safetensors"}) fs::copy_file(hf / f, s / "hf2" / f);
  writeFile(s / "hf2/tokenizer.json", "{}");
  const auto refused = runPosgeom(train(config, s / "hf2", {"--force"}));
  EXPECT_EQ(refused.exit_code, 2) << refused.err;
  EXPECT_EQ(refused.err, "posgeom: error: " + (s / "hf2").string() +
                             ": holds a model that posgeom's train did not write (no train_config.json or checkpoint.safetensors of a "
                             "posgeom training run); train replaces only its own runs (with --force), so move it or choose another --out\n");
  EXPECT_EQ(readFile(s / "hf2/model.safetensors"), readFile(hf / "model.safetensors"));
  EXPECT_EQ(readFile(s / "hf2/config.json"), readFile(hf / "config.json"));
  EXPECT_EQ(readFile(s / "hf2/tokenizer.json"), "{}");
}

// `--resume --stop-after 10` on a checkpoint at step 650 re-exported its model and said
// "trained 650 steps", exit 0.
TEST(TrainCommand, AStopAfterNotPastTheCheckpointIsRefusedBeforeAnythingIsWritten) {
  ScratchDir s;
  const auto config = tinyTrainConfig(s, 20);
  ASSERT_EQ(runPosgeom(train(config, s / "o", {"--stop-after", "10"})).exit_code, 0);
  const auto written = [&] {
    std::vector<fs::file_time_type> times;
    for (const char* f : {"model.safetensors", "training.json", "train_log.csv", "checkpoint.safetensors"})
      times.push_back(fs::last_write_time(s / "o" / f));
    return times;
  };
  const auto before = written();
  for (const std::string& at : std::vector<std::string>{"10", "5"}) {
    const auto refused = runPosgeom(train(config, s / "o", {"--resume", "--stop-after", at}));
    EXPECT_EQ(refused.exit_code, 2) << refused.err;
    EXPECT_EQ(refused.err, "posgeom: error: --stop-after: " + at + " is not past step 10, where the checkpoint " +
                               (s / "o/checkpoint.safetensors").string() + " resumes: give --stop-after 11 or more, or leave it out\n");
    EXPECT_TRUE(refused.out.empty()) << refused.out;
  }
  EXPECT_EQ(written(), before);
  EXPECT_EQ(runPosgeom(train(config, s / "o", {"--resume", "--stop-after", "11"})).exit_code, 0);
}

// --device is parsed with the arguments, as analyze's: its words, before anything is read.
TEST(TrainCommand, ABadDeviceIsRefusedAsAnalyzeRefusesIt) {
  ScratchDir s;
  const auto config = tinyTrainConfig(s, 2);
  const auto model = (fs::path(POSGEOM_SOURCE_DIR) / "models/default").string();
  const std::string said = "posgeom: error: --device: 'tpu' is not a device (use cpu, cuda or cuda:N) (see --help)\n";
  for (const auto& args : {train(config, s / "o", {"--device", "tpu"}),
                           std::vector<std::string>{"eval-addition", "--model", model, "--device", "tpu", "--out", (s / "e.csv").string()},
                           std::vector<std::string>{"analyze", "--device", "tpu"}}) {
    const auto refused = runPosgeom(args);
    EXPECT_EQ(refused.exit_code, 2) << args[0];
    EXPECT_EQ(refused.err, said) << args[0];
  }
  EXPECT_FALSE(fs::exists(s / "o"));
  EXPECT_FALSE(fs::exists(s / "e.csv"));
}

}  // namespace
}  // namespace posgeom::testing
