#include "posgeom/corpus/byte_source.h"

#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include <chrono>
#include <csignal>
#include <thread>

#include "posgeom/base/error.h"
#include "posgeom/base/stop_signals.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::string drain(corpus::ByteSource& s) {
  std::string out;
  char buf[7];  // small on purpose: exercises partial reads
  for (std::size_t n; (n = s.read(buf, sizeof(buf))) > 0;) out.append(buf, n);
  return out;
}

std::string gzipOf(const std::string& text) {
  z_stream z{};
  deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(deflateBound(&z, text.size()) + 32, '\0');
  z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(text.data()));
  z.avail_in = static_cast<uInt>(text.size());
  z.next_out = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = static_cast<uInt>(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

std::string zstdOf(const std::string& text) {
  std::string out(ZSTD_compressBound(text.size()), '\0');
  out.resize(ZSTD_compress(out.data(), out.size(), text.data(), text.size(), 3));
  return out;
}

const std::string kText = "first line\nsecond line with more words\n" + std::string(5000, 'x');

TEST(ByteSource, PlainGzipAndZstdGiveTheSameBytes) {
  ScratchDir s;
  writeFile(s / "plain.txt", kText);
  writeFile(s / "a.gz", gzipOf(kText));
  writeFile(s / "no-extension", zstdOf(kText));  // detected by content, not name
  for (const char* name : {"plain.txt", "a.gz", "no-extension"}) {
    auto src = corpus::openByteSource((s / name).string());
    EXPECT_EQ(drain(*src), kText) << name;
  }
}

TEST(ByteSource, ConcatenatedGzipMembersContinue) {
  ScratchDir s;
  writeFile(s / "two.gz", gzipOf("one ") + gzipOf("two"));
  auto src = corpus::openByteSource((s / "two.gz").string());
  EXPECT_EQ(drain(*src), "one two");
}

TEST(ByteSource, TruncatedAndCorruptDataAreBadInputs) {
  ScratchDir s;
  const auto gz = gzipOf(kText);
  writeFile(s / "cut.gz", gz.substr(0, gz.size() / 2));
  auto cut = corpus::openByteSource((s / "cut.gz").string());
  EXPECT_THROW(drain(*cut), InputError);
  const auto zs = zstdOf(kText);  // no checksum by default: truncation is what zstd can tell
  writeFile(s / "bad.zst", zs.substr(0, zs.size() - 3));
  auto bad = corpus::openByteSource((s / "bad.zst").string());
  EXPECT_THROW(drain(*bad), InputError);
}

// A pipe whose writer stays but gives nothing: the wait ends on a stop signal (it used to
// ignore the first SIGTERM, the run waiting for ever).
TEST(ByteSource, AStopSignalEndsTheWaitOnASilentPipe) {
  int ends[2];
  ASSERT_EQ(::pipe(ends), 0);
  const StopSignals signals;
  std::thread stopper([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    std::raise(SIGTERM);
  });
  const auto start = std::chrono::steady_clock::now();
  try {
    corpus::openByteSource("/proc/self/fd/" + std::to_string(ends[0]));
    ADD_FAILURE() << "the read returned";
  } catch (const RunStopped& e) {
    EXPECT_EQ(e.exitCode(), 128 + SIGTERM);
    EXPECT_NE(std::string(e.what()).find("SIGTERM while waiting for /proc/self/fd/"), std::string::npos) << e.what();
  }
  stopper.join();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  ::close(ends[0]);
  ::close(ends[1]);
}

TEST(ByteSource, EmptyAndMissingFiles) {
  ScratchDir s;
  writeFile(s / "empty", "");
  auto empty = corpus::openByteSource((s / "empty").string());
  EXPECT_EQ(drain(*empty), "");
  EXPECT_THROW(corpus::openByteSource((s / "missing").string()), InputError);
}

}  // namespace
}  // namespace posgeom::testing
