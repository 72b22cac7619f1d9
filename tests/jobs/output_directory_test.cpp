#include "posgeom/jobs/output_directory.h"

#include <unistd.h>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;
using jobs::OutMode;
using jobs::OutputDirectory;

// The names in `dir`, sorted.
std::vector<std::string> entries(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// The InputError's message when opening `out` in `mode` is refused ("" when it is not).
std::string refusal(const fs::path& out, OutMode mode) {
  try {
    OutputDirectory opened(out, mode);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(OutputDirectory, NothingReachesOutUntilCommit) {
  ScratchDir s;
  {
    OutputDirectory out(s / "a/b", OutMode::kNew);
    writeFile(out.work() / "summary.json", "{}");
    EXPECT_FALSE(fs::exists(s / "a/b"));
    EXPECT_EQ(out.work(), s / "a/.b.posgeom-work");
  }
  // Not committed, nothing to resume: nothing is left, not even the directory made for it.
  EXPECT_FALSE(fs::exists(s / "a"));
  {
    OutputDirectory out(s / "c", OutMode::kNew);
    writeFile(out.work() / "summary.json", "new");
    out.commit();
  }
  EXPECT_EQ(readFile(s / "c/summary.json"), "new");
  EXPECT_EQ(entries(s.path()), (std::vector<std::string>{"c"}));
}

TEST(OutputDirectory, ForceReplacesTheOldReportWholeAtCommit) {
  ScratchDir s;
  fs::create_directories(s / "r");
  writeFile(s / "r/summary.json", "old");
  writeFile(s / "r/pos_L1.csv", "old");
  EXPECT_NE(refusal(s / "r", OutMode::kNew).find("exists and is not empty; pass --force to replace it"), std::string::npos);
  OutputDirectory out(s / "r", OutMode::kForce);
  writeFile(out.work() / "summary.json", "new");
  EXPECT_EQ(readFile(s / "r/summary.json"), "old");  // the old report until the new one is whole
  out.commit();
  EXPECT_EQ(entries(s / "r"), std::vector<std::string>{"summary.json"});  // no old file mixed in
  EXPECT_EQ(readFile(s / "r/summary.json"), "new");
}

TEST(OutputDirectory, ForceNeverReplacesADirectoryWithOtherFiles) {
  ScratchDir s;
  fs::create_directories(s / "mine");
  writeFile(s / "mine/summary.json", "{}");
  writeFile(s / "mine/notes.txt", "mine");
  EXPECT_NE(refusal(s / "mine", OutMode::kForce).find("holds 'notes.txt', which is not a posgeom report's file"),
            std::string::npos);
  EXPECT_EQ(readFile(s / "mine/notes.txt"), "mine");
  writeFile(s / "file", "x");
  EXPECT_THROW(OutputDirectory(s / "file", OutMode::kForce), InputError);
  EXPECT_THROW(OutputDirectory(s / "file/sub", OutMode::kNew), InputError);
}

// A killed run's leftovers: cleaned by the next run, or kept when they hold a state.
TEST(OutputDirectory, TheNextRunCleansWhatAKilledRunLeft) {
  ScratchDir s;
  fs::create_directories(s / ".r.posgeom-work");
  writeFile(s / ".r.posgeom-work/summary.json.tmp.123", "torn");
  {
    OutputDirectory out(s / "r", OutMode::kNew);
    EXPECT_EQ(entries(out.work()), std::vector<std::string>{});
    out.commit();
  }
  EXPECT_EQ(entries(s.path()), std::vector<std::string>{"r"});
  // Killed between the two renames of a swap without RENAME_EXCHANGE: the old one returns.
  fs::rename(s / "r", s / ".r.posgeom-old");
  { OutputDirectory out(s / "r", OutMode::kForce); }
  EXPECT_EQ(entries(s.path()), std::vector<std::string>{"r"});
}

TEST(OutputDirectory, ASavedStateIsKeptForResumeAndGuardsAFreshStart) {
  ScratchDir s;
  {
    OutputDirectory out(s / "r", OutMode::kNew);
    writeFile(out.work() / "state.safetensors", "state");
    writeFile(out.work() / "layers.csv.tmp.9", "torn");
  }  // stopped: the state stays, the rest goes
  EXPECT_EQ(entries(s / ".r.posgeom-work"), std::vector<std::string>{"state.safetensors"});
  const auto guarded = refusal(s / "r", OutMode::kNew);
  EXPECT_NE(guarded.find("an interrupted run left its saved state in"), std::string::npos) << guarded;
  EXPECT_NE(guarded.find("--resume"), std::string::npos) << guarded;
  {
    OutputDirectory resumed(s / "r", OutMode::kResume);
    EXPECT_EQ(resumed.resumeState(), s / ".r.posgeom-work/state.safetensors");
  }
  { OutputDirectory fresh(s / "r", OutMode::kForce); }  // --force starts over
  EXPECT_FALSE(fs::exists(s / ".r.posgeom-work"));
  OutputDirectory nothing(s / "r", OutMode::kResume);
  EXPECT_THROW(nothing.resumeState(), InputError);
}

// Two runs on one --out: the second refuses, naming the first's pid, instead of replacing
// its report; the lock goes with the run and leaves no file behind.
TEST(OutputDirectory, ASecondRunOnTheSameOutRefuses) {
  ScratchDir s;
  {
    OutputDirectory first(s / "report", OutMode::kNew);
    try {
      OutputDirectory second(s / "report/", OutMode::kForce);  // the same directory, however written
      ADD_FAILURE() << "a second run must be refused";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is being written by another posgeom run (pid " + std::to_string(::getpid()) + ")"),
                std::string::npos)
          << what;
    }
    writeFile(first.work() / "summary.json", "{}");
    first.commit();
  }
  EXPECT_FALSE(fs::exists(s / ".report.posgeom-lock"));
  { OutputDirectory again(s / "report", OutMode::kForce); }  // free again once the first is done
  EXPECT_EQ(entries(s.path()), std::vector<std::string>{"report"});
}

// An --out the run cannot write is found before any work (even as root: /proc refuses).
TEST(OutputDirectory, AnUnwritableOutIsRefusedAtOnce) {
  EXPECT_NE(refusal("/proc/posgeom-no-such-report", OutMode::kForce).find("/proc/posgeom-no-such-report: is not writable"),
            std::string::npos);
}

}  // namespace
}  // namespace posgeom::testing
