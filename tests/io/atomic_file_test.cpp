#include "posgeom/io/atomic_file.h"

#include <sys/resource.h>

#include <csignal>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

size_t entries(const fs::path& dir) {
  return static_cast<size_t>(std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(AtomicFile, WritesAndReplaces) {
  ScratchDir s;
  io::writeTextFileAtomically(s / "a.txt", "one");
  io::writeTextFileAtomically(s / "a.txt", "two");
  EXPECT_EQ(readFile(s / "a.txt"), "two");
  EXPECT_EQ(entries(s.path()), 1u);
}

TEST(AtomicFile, AFailingWriterLeavesNothingBehind) {
  ScratchDir s;
  io::writeTextFileAtomically(s / "a.txt", "old");
  EXPECT_THROW(io::writeFileAtomically(s / "a.txt",
                                       [](std::ostream& out) {
                                         out << "partial";
                                         throw std::runtime_error("boom");
                                       }),
               std::runtime_error);
  EXPECT_EQ(readFile(s / "a.txt"), "old");
  EXPECT_EQ(entries(s.path()), 1u);
}

TEST(AtomicFile, UnwritableDirectoryIsABadInput) {
  EXPECT_THROW(io::writeTextFileAtomically("/nonexistent-dir/a.txt", "x"), InputError);
}

TEST(AtomicFile, AFullDiskLeavesNoPartialFile) {
  // A file-size limit makes writes fail with EFBIG, as a full disk fails them with ENOSPC.
  ScratchDir s;
  struct rlimit old {};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 4096;
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  bool threw = false;
  try {
    io::writeTextFileAtomically(s / "big.bin", std::string(1 << 20, 'x'));
  } catch (const InputError& e) {
    threw = std::string(e.what()).find("big.bin: cannot write: File too large") != std::string::npos;
  }
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  EXPECT_TRUE(threw);
  EXPECT_EQ(entries(s.path()), 0u);
}

}  // namespace
}  // namespace posgeom::testing
