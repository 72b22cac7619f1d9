#include "posgeom/jobs/output_directory.h"

#include <unistd.h>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(OutputDirectory, ARunThatWroteNothingLeavesNoDirectoryBehind) {
  ScratchDir s;
  { const jobs::OutputDirectory out(s / "a/b", false); }
  EXPECT_FALSE(fs::exists(s / "a/b"));
  {
    const jobs::OutputDirectory out(s / "c", false);
    writeFile(s / "c/summary.json", "{}");
  }
  EXPECT_TRUE(fs::exists(s / "c/summary.json"));
}

TEST(OutputDirectory, ANonEmptyDirectoryNeedsForce) {
  ScratchDir s;
  fs::create_directories(s / "old");
  writeFile(s / "old/summary.json", "{}");
  try {
    const jobs::OutputDirectory out(s / "old", false);
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("exists and is not empty; pass --force"), std::string::npos);
  }
  { const jobs::OutputDirectory out(s / "old", true); }
  EXPECT_TRUE(fs::exists(s / "old/summary.json"));  // not this run's to remove
  { const jobs::OutputDirectory out(s / "empty-existing", false); }
  writeFile(s / "file", "x");
  EXPECT_THROW(jobs::OutputDirectory(s / "file/sub", false), InputError);
}

// Two runs on one --out: the second refuses, naming the first's pid, instead of replacing
// its report; the lock goes with the run and leaves no file behind.
TEST(OutputDirectory, ASecondRunOnTheSameOutRefuses) {
  ScratchDir s;
  {
    const jobs::OutputDirectory first(s / "report", false);
    try {
      const jobs::OutputDirectory second(s / "report/", true);  // the same directory, however written
      ADD_FAILURE() << "a second run must be refused";
    } catch (const InputError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is being written by another posgeom run (pid " + std::to_string(::getpid()) + ")"),
                std::string::npos)
          << what;
    }
    writeFile(s / "report/summary.json", "{}");
  }
  EXPECT_FALSE(fs::exists(s / ".report.posgeom-lock"));
  { const jobs::OutputDirectory again(s / "report", true); }  // free again once the first is done
  for (const auto& e : fs::directory_iterator(s.path())) EXPECT_EQ(e.path().filename(), "report");
}

// An --out the run cannot write is found before any work (even as root: /proc refuses).
TEST(OutputDirectory, AnUnwritableOutIsRefusedAtOnce) {
  try {
    const jobs::OutputDirectory out("/proc/posgeom-no-such-report", true);
    ADD_FAILURE() << "an unwritable --out must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("/proc/posgeom-no-such-report: is not writable"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
