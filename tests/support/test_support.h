#pragma once
// Shared helpers for every suite: where ../shared is, scratch directories, and
// running the posgeom binary.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace posgeom::testing {

// ../shared beside the checkout, or $POSGEOM_SHARED. Empty when absent.
std::filesystem::path sharedDir();
// Hugging Face transformers' own fixtures (tools/hf-goldens), committed with the tests:
// tests/fixtures/hf/<name>/ holds the model and golden.safetensors, computed in float64.
std::filesystem::path hfFixtureDir(const std::string& name);
// A copy of that fixture at <dir>/m with its config.json edited: what a family reads of it.
std::filesystem::path editedHfFixture(const std::filesystem::path& dir, const std::string& name,
                                      const std::function<void(nlohmann::json&)>& edit);
// A real pretrained checkpoint that tools/real-models fetches: $POSGEOM_REAL_MODELS/<name>,
// else .cache/models/<name> in the checkout. Empty when it is not there (complete).
std::filesystem::path realModelDir(const std::string& name);
bool runningInCi();
// An environment lookup of these variables only (for functions that take one).
std::function<std::optional<std::string>(const char*)> envOf(std::map<std::string, std::string> vars);

// A fresh directory removed when the object goes out of scope.
class ScratchDir {
 public:
  ScratchDir();
  ~ScratchDir();
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::filesystem::path& path() const { return path_; }
  std::filesystem::path operator/(const std::string& name) const { return path_ / name; }

 private:
  std::filesystem::path path_;
};

struct CommandResult {
  int exit_code = -1;
  std::string out;
  std::string err;
  int64_t peak_rss_bytes = 0;  // the program's peak resident set (its own, measured by the kernel)
};
// Runs the posgeom executable built with the tests, with `stdin_text` on its standard input.
CommandResult runPosgeom(const std::vector<std::string>& args, const std::string& stdin_text = "");
using Environment = std::vector<std::pair<std::string, std::string>>;
// A program started in the background, for tests that signal it part-way; `env` is set on
// top of this process's environment.
class RunningProgram {
 public:
  RunningProgram(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text = "",
                 const Environment& env = {});
  ~RunningProgram();  // kills it if it still runs
  RunningProgram(const RunningProgram&) = delete;
  RunningProgram& operator=(const RunningProgram&) = delete;
  void signal(int sig);
  CommandResult wait();
  int pid() const { return pid_; }

 private:
  std::unique_ptr<ScratchDir> scratch_;
  int pid_ = -1;
};
// Ranks of a distributed posgeom run, started at once as torchrun starts its workers:
// RANK, WORLD_SIZE, LOCAL_RANK, MASTER_ADDR (127.0.0.1) and MASTER_PORT (a free port)
// set, the arguments of each from `args_of(rank)`.
class LaunchedRanks {
 public:
  LaunchedRanks(int world, const std::function<std::vector<std::string>(int rank)>& args_of);
  RunningProgram& rank(int r) { return *ranks_.at(static_cast<std::size_t>(r)); }
  std::vector<CommandResult> wait();  // by rank

 private:
  std::vector<std::unique_ptr<RunningProgram>> ranks_;
};
// A TCP port nobody listens on now.
int freePort();
// Runs any executable (absolute path) the same way.
CommandResult runProgram(const std::string& program, const std::vector<std::string>& args, const std::string& stdin_text = "");

std::string readFile(const std::filesystem::path& path);
void writeFile(const std::filesystem::path& path, const std::string& bytes);
// A raw safetensors image: 8-byte length (the real one unless `claimed_length` is given),
// the header text as is, then the data bytes. For building malformed files.
std::string safetensorsBytes(const std::string& header, const std::string& data, long long claimed_length = -1);
// Rewrites a safetensors file's header JSON, keeping its data section as it is.
void rewriteSafetensorsHeader(const std::filesystem::path& path, const std::function<void(nlohmann::json&)>& edit);
// Sets every value of an F32 tensor of a safetensors file.
void fillF32Tensor(const std::filesystem::path& path, const std::string& name, float value);
// Copies a fixture model directory so a test can damage it.
std::filesystem::path copyFixtureModel(const std::string& name, const std::filesystem::path& into);

}  // namespace posgeom::testing

// Skips the test (fails under CI=true, whose run fetches it) when a real checkpoint is missing.
#define POSGEOM_REQUIRE_REAL_MODEL(name)                                                              \
  do {                                                                                                \
    if (::posgeom::testing::realModelDir(name).empty()) {                                             \
      if (::posgeom::testing::runningInCi()) FAIL() << "missing real model " << (name) << ": tools/real-models"; \
      GTEST_SKIP() << "needs the real model " << (name) << " (tools/real-models fetches it)";         \
    }                                                                                                 \
  } while (0)

// Skips the test (fails under CI=true) when a path under ../shared is missing.
#define POSGEOM_REQUIRE_SHARED(relative)                                                         \
  do {                                                                                           \
    const auto posgeom_shared_ = ::posgeom::testing::sharedDir();                                \
    if (posgeom_shared_.empty() || !std::filesystem::exists(posgeom_shared_ / (relative))) {     \
      if (::posgeom::testing::runningInCi()) FAIL() << "missing ../shared/" << (relative);       \
      GTEST_SKIP() << "needs ../shared/" << (relative) << " (set POSGEOM_SHARED)";               \
    }                                                                                            \
  } while (0)
