#include "posgeom/io/mapped_file.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(MappedFile, MapsContents) {
  ScratchDir s;
  writeFile(s / "f", "hello");
  const auto m = io::MappedFile::open(s / "f");
  EXPECT_EQ(m->size(), 5u);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(m->data()), 5), "hello");
}

TEST(MappedFile, EmptyFileHasNoData) {
  ScratchDir s;
  writeFile(s / "f", "");
  EXPECT_EQ(io::MappedFile::open(s / "f")->size(), 0u);
}

TEST(MappedFile, MissingFileAndDirectoryAreBadInputs) {
  ScratchDir s;
  EXPECT_THROW(io::MappedFile::open(s / "missing"), InputError);
  EXPECT_THROW(io::MappedFile::open(s.path()), InputError);
}

}  // namespace
}  // namespace posgeom::testing
