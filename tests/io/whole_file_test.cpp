#include "posgeom/io/whole_file.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::string readErrorOf(const std::filesystem::path& p) {
  try {
    io::readWholeFile(p);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(WholeFile, ReadsEveryByte) {
  ScratchDir s;
  const std::string bytes("a\0b\xff\n", 5);
  writeFile(s / "f", bytes);
  EXPECT_EQ(io::readWholeFile(s / "f"), bytes);
  writeFile(s / "empty", "");
  EXPECT_EQ(io::readWholeFile(s / "empty"), "");
}

TEST(WholeFile, SaysWhatIsWrongWithThePath) {
  ScratchDir s;
  EXPECT_EQ(readErrorOf(s / "none"), (s / "none").string() + ": does not exist");
  std::filesystem::create_directory(s / "dir");
  EXPECT_EQ(readErrorOf(s / "dir"), (s / "dir").string() + ": is not a regular file");
}

}  // namespace
}  // namespace posgeom::testing
