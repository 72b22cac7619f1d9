#include "posgeom/io/mapped_file.h"

#include "posgeom/base/error.h"
#include "posgeom/base/process_memory.h"
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

// A streamed block's weights, once copied, leave the process's resident memory; the file
// still reads the same.
TEST(MappedFile, DroppedPagesLeaveResidentMemoryAndReadTheSame) {
  ScratchDir s;
  constexpr std::size_t kBytes = 64u << 20;
  std::string contents(kBytes, '\0');
  for (std::size_t i = 0; i < kBytes; i += 4096) contents[i] = static_cast<char>('a' + i / 4096 % 26);
  writeFile(s / "f", contents);
  const auto m = io::MappedFile::open(s / "f");
  const int64_t before = residentBytes();
  ASSERT_GT(before, 0);
  uint64_t sum = 0;
  for (std::size_t i = 0; i < kBytes; i += 4096) sum += static_cast<uint8_t>(m->data()[i]);
  const int64_t touched = residentBytes();
  EXPECT_GT(touched - before, int64_t{48} << 20);  // the mapping's pages are this process's now
  io::dropMappedPages(m->data() + 1, kBytes - 1);   // whole pages inside: all but the first
  EXPECT_GT(touched - residentBytes(), int64_t{48} << 20);
  uint64_t again = 0;
  for (std::size_t i = 0; i < kBytes; i += 4096) again += static_cast<uint8_t>(m->data()[i]);
  EXPECT_EQ(again, sum);
}

}  // namespace
}  // namespace posgeom::testing
