#include "posgeom/io/fingerprint.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

void writeBytes(const fs::path& p, const std::string& bytes) {
  fs::create_directories(p.parent_path());
  writeFile(p, bytes);
}

std::string pattern(std::size_t n) {
  std::string s(n, '\0');
  for (std::size_t i = 0; i < n; ++i) s[i] = static_cast<char>((i * 2654435761u) >> 13);
  return s;
}

TEST(Fingerprint, FollowsContentNotPath) {
  ScratchDir s;
  const auto bytes = pattern(5000);
  writeBytes(s / "a/model.safetensors", bytes);
  writeBytes(s / "b/c/model.safetensors", bytes);
  EXPECT_EQ(io::fingerprintFiles({s / "a/model.safetensors"}), io::fingerprintFiles({s / "b/c/model.safetensors"}));
  auto changed = bytes;
  changed[2500] ^= 1;
  writeBytes(s / "b/c/model.safetensors", changed);
  EXPECT_NE(io::fingerprintFiles({s / "a/model.safetensors"}), io::fingerprintFiles({s / "b/c/model.safetensors"}));
  // The same bytes under another file name are another file.
  writeBytes(s / "a/other.safetensors", bytes);
  EXPECT_NE(io::fingerprintFiles({s / "a/model.safetensors"}), io::fingerprintFiles({s / "a/other.safetensors"}));
}

TEST(Fingerprint, LargeFilesAreSampledAtTheEndsAndSpreadBlocks) {
  ScratchDir s;
  const auto bytes = pattern(8 << 20);  // 8 MiB: more than the 1 MiB read
  writeBytes(s / "w.bin", bytes);
  const auto base = io::fingerprintFiles({s / "w.bin"});
  auto edit = [&](std::size_t at) {
    auto b = bytes;
    b[at] ^= 0x55;
    writeBytes(s / "w.bin", b);
    return io::fingerprintFiles({s / "w.bin"});
  };
  EXPECT_NE(edit(10), base);                   // the header
  EXPECT_NE(edit(bytes.size() - 10), base);    // the tail
  EXPECT_NE(edit(256 * 1024 + 100), base);     // the first spread block
  EXPECT_EQ(edit(256 * 1024 + 20000), base);   // between blocks: the documented blind spot
}

TEST(Fingerprint, ModelDirectoryCountsConfigAndWeightsOnly) {
  ScratchDir s;
  writeBytes(s / "m/config.json", "{\"n_embd\": 8}");
  writeBytes(s / "m/model.safetensors", pattern(3000));
  const auto base = io::modelFingerprint(s / "m");
  writeBytes(s / "m/tokenizer.json", "{}");
  writeBytes(s / "m/README.md", "notes");
  EXPECT_EQ(io::modelFingerprint(s / "m"), base);
  writeBytes(s / "m/config.json", "{\"n_embd\": 9}");
  EXPECT_NE(io::modelFingerprint(s / "m"), base);
}

// train's corpus identity: a 1.1 MB corpus with one byte changed between the sampled
// blocks resumed its run silently, and the same text under another name was refused.
TEST(Fingerprint, ContentDigestSeesEveryByteAndNoName) {
  ScratchDir s;
  const auto bytes = pattern(1100000);
  writeBytes(s / "a.txt", bytes);
  const auto base = io::contentDigest({s / "a.txt"});
  auto changed = bytes;
  changed[279000] ^= 1;  // between fingerprintFiles' first two spread blocks
  writeBytes(s / "changed/a.txt", changed);
  EXPECT_EQ(io::fingerprintFiles({s / "a.txt"}), io::fingerprintFiles({s / "changed/a.txt"}));
  EXPECT_NE(io::contentDigest({s / "changed/a.txt"}), base);
  writeBytes(s / "renamed/other.txt", bytes);
  EXPECT_EQ(io::contentDigest({s / "renamed/other.txt"}), base);
  // One stream: the same text split otherwise over files is the same; another order is not.
  writeBytes(s / "p1.txt", bytes.substr(0, 1000));
  writeBytes(s / "p2.txt", bytes.substr(1000));
  EXPECT_EQ(io::contentDigest({s / "p1.txt", s / "p2.txt"}), base);
  EXPECT_NE(io::contentDigest({s / "p2.txt", s / "p1.txt"}), base);
  EXPECT_NE(io::contentDigest({}), base);
}

TEST(Fingerprint, AnUnreadableFileIsBadInputNamingIt) {
  ScratchDir s;
  try {
    io::fingerprintFiles({s / "absent.bin"});
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("absent.bin"), std::string::npos) << e.what();
  }
  EXPECT_THROW(io::contentDigest({s / "absent.txt"}), InputError);
}

}  // namespace
}  // namespace posgeom::testing
