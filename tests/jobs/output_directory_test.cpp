#include "posgeom/jobs/output_directory.h"

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

}  // namespace
}  // namespace posgeom::testing
