#include "posgeom/io/temporary_directory.h"

#include <gtest/gtest.h>

#include <fstream>

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

TEST(TemporaryDirectory, IsNewUnderTheTemporaryDirectoryAndGoesWithEverythingInIt) {
  fs::path kept;
  {
    io::TemporaryDirectory a("test"), b("test");
    kept = a.path();
    EXPECT_NE(a.path(), b.path());
    EXPECT_TRUE(fs::is_directory(a.path()));
    EXPECT_EQ(a.path().parent_path(), fs::temp_directory_path());
    EXPECT_EQ(a.path().filename().string().rfind("posgeom-test-", 0), 0u);
    fs::create_directories(a.path() / "x/y");
    std::ofstream(a.path() / "x/y/file") << "data";
  }
  EXPECT_FALSE(fs::exists(kept));
}

}  // namespace
}  // namespace posgeom::testing
