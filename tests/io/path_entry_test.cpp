#include "posgeom/io/path_entry.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_support.h"

namespace posgeom::io {
namespace {

namespace fs = std::filesystem;

TEST(PathEntry, ALinkToNothingIsAnEntryAndAMissingNameIsNot) {
  testing::ScratchDir s;
  EXPECT_FALSE(entryExists(s / "missing"));
  EXPECT_FALSE(entryExists(s / "missing" / "below"));
  std::ofstream(s / "file") << "x";
  EXPECT_TRUE(entryExists(s / "file"));
  EXPECT_TRUE(entryExists(s.path()));
  fs::create_symlink(s / "nowhere", s / "dangling");
  EXPECT_FALSE(fs::exists(s / "dangling"));  // what following the link would say
  EXPECT_TRUE(entryExists(s / "dangling"));
}

}  // namespace
}  // namespace posgeom::io
