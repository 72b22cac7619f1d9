#include "posgeom/io/path_lock.h"

#include <unistd.h>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;
using io::PathLock;

// The InputError's message when `path` cannot be locked ("" when it can).
std::string lockRefusal(const fs::path& path, const std::string& option = "--out") {
  try {
    PathLock lock(path, option);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(PathLock, ASecondHolderIsRefusedWithTheFirstOnesPid) {
  ScratchDir s;
  PathLock held(s / "out");
  const auto message = lockRefusal(s / "out", "out (the sweep's)");
  EXPECT_EQ(message, (s / "out").string() + ": is being written by another posgeom run (pid " + std::to_string(::getpid()) +
                         "); wait for it to finish or choose another out (the sweep's)");
}

TEST(PathLock, OnePathHowEverItIsWritten) {
  ScratchDir s;
  fs::create_directories(s / "d");
  PathLock held(s / "d/r");
  EXPECT_NE(lockRefusal(s / "d/r/"), "");
  EXPECT_NE(lockRefusal(s / "d/./r"), "");
  EXPECT_NE(lockRefusal(s / "d/x/../r"), "");
  EXPECT_EQ(lockRefusal(s / "d/r2"), "");  // another output is free
}

TEST(PathLock, ReleasedLocksAreTakenAgainAndLeaveNothingBehind) {
  ScratchDir s;
  {
    PathLock first(s / "a/out");  // its directory is made for the lock
    EXPECT_TRUE(fs::exists(s / "a/.out.posgeom-lock"));
    first.release();
    EXPECT_FALSE(fs::exists(s / "a/.out.posgeom-lock"));
    PathLock second(s / "a/out");
  }
  EXPECT_FALSE(fs::exists(s / "a/.out.posgeom-lock"));
}

TEST(PathLock, ALinkAndItsTargetAreOneOutput) {
  // Two names of one directory took two locks, and two train --force runs wrote into it.
  ScratchDir s;
  fs::create_directories(s / "run");
  fs::create_directory_symlink(s / "run", s / "link");
  PathLock held(s / "run");
  EXPECT_NE(lockRefusal(s / "link"), "");
  EXPECT_NE(lockRefusal(s / "link/"), "");
}

TEST(PathLock, DirectoriesMadeForTheLockGoWithItWhenEmpty) {
  ScratchDir s;
  { PathLock lock(s / "new/deep/out"); }
  EXPECT_FALSE(fs::exists(s / "new"));  // a failed run left new/deep/ behind
  {
    PathLock lock(s / "kept/deep/out");
    writeFile(s / "kept/deep/out", "the run's output");
  }
  EXPECT_EQ(readFile(s / "kept/deep/out"), "the run's output");
}

TEST(PathLock, APlaceThatCannotHoldTheLockIsNamed) {
  // Under a regular file no one (root included) can create the lock.
  ScratchDir s;
  writeFile(s / "file", "x");
  const auto message = lockRefusal(s / "file/out");
  EXPECT_EQ(message.rfind((s / "file/out").string() + ": is not writable: cannot create its lock", 0), 0u) << message;
}

TEST(PathLock, BesideNamesTheHiddenSibling) {
  EXPECT_EQ(io::besidePath("/x/y/r/", ".posgeom-work"), fs::path("/x/y/.r.posgeom-work"));
  EXPECT_EQ(io::normalisedPath("/x/./y/../r/"), fs::path("/x/r"));
}

}  // namespace
}  // namespace posgeom::testing
