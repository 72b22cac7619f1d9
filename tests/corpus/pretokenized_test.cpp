#include <cstring>

#include "posgeom/base/error.h"
#include "posgeom/corpus/token_stream.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

template <typename T>
std::string raw(const std::vector<T>& ids) {
  return std::string(reinterpret_cast<const char*>(ids.data()), ids.size() * sizeof(T));
}

std::vector<int32_t> readIds(corpus::TokenStream& s) {
  std::vector<int32_t> out;
  while (auto b = s.next()) out.insert(out.end(), b->ids.begin(), b->ids.end());
  return out;
}

std::string npy(const std::string& descr, const std::string& data, std::size_t n) {
  std::string header = "{'descr': '" + descr + "', 'fortran_order': False, 'shape': (" + std::to_string(n) + ",), }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string out = "\x93NUMPY\x01";
  out += '\0';
  out += static_cast<char>(header.size() & 0xff);
  out += static_cast<char>(header.size() >> 8);
  return out + header + data;
}

TEST(Pretokenized, Uint16BinIsTheDefault) {
  ScratchDir s;
  writeFile(s / "t.bin", raw<uint16_t>({1, 2, 65535}));
  auto stream = corpus::openPretokenized((s / "t.bin").string(), "", 70000);
  EXPECT_EQ(readIds(*stream), (std::vector<int32_t>{1, 2, 65535}));
  EXPECT_EQ(stream->stats().tokens, 3);
}

TEST(Pretokenized, SidecarAndOverrideChooseTheDtype) {
  ScratchDir s;
  writeFile(s / "tokens.bin", raw<uint32_t>({100000, 7}));
  writeFile(s / "tokens.json", R"({"dtype": "uint32"})");
  auto sidecar = corpus::openPretokenized((s / "tokens.bin").string(), "", 200000);
  EXPECT_EQ(readIds(*sidecar), (std::vector<int32_t>{100000, 7}));
  auto forced = corpus::openPretokenized((s / "tokens.bin").string(), "uint16", 200000);
  EXPECT_EQ(readIds(*forced).size(), 4u);
}

TEST(Pretokenized, OutOfVocabularyIdGivesIdAndOffset) {
  ScratchDir s;
  writeFile(s / "t.bin", raw<uint16_t>({1, 2, 3, 999, 4}));
  auto stream = corpus::openPretokenized((s / "t.bin").string(), "", 500);
  try {
    readIds(*stream);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("token id 999 at offset 3 is outside the vocabulary of 500"), std::string::npos)
        << e.what();
  }
}

TEST(Pretokenized, OddByteCountIsABadInput) {
  ScratchDir s;
  writeFile(s / "t.bin", std::string("\x01\x00\x02", 3));
  auto stream = corpus::openPretokenized((s / "t.bin").string(), "", 10);
  EXPECT_THROW(readIds(*stream), InputError);
}

TEST(Pretokenized, NpyOfSeveralIntegerTypes) {
  ScratchDir s;
  writeFile(s / "a.npy", npy("<i8", raw<int64_t>({5, 6, 7}), 3));
  writeFile(s / "b.npy", npy("<u2", raw<uint16_t>({8, 9}), 2));
  auto a = corpus::openPretokenized((s / "a.npy").string(), "", 10);
  EXPECT_EQ(readIds(*a), (std::vector<int32_t>{5, 6, 7}));
  auto b = corpus::openPretokenized((s / "b.npy").string(), "", 10);
  EXPECT_EQ(readIds(*b), (std::vector<int32_t>{8, 9}));
  writeFile(s / "c.npy", npy("<f4", raw<float>({1.0f}), 1));
  EXPECT_THROW(corpus::openPretokenized((s / "c.npy").string(), "", 10), InputError);
  writeFile(s / "d.npy", "not numpy at all");
  EXPECT_THROW(corpus::openPretokenized((s / "d.npy").string(), "", 10), InputError);
}

// A header that claims more (or fewer) ids than the data holds is a damaged file, not a short
// corpus (issue 22: it used to be read short without a word); a 2-D shape counts N x M.
TEST(Pretokenized, NpyShapeMustMatchTheData) {
  ScratchDir s;
  writeFile(s / "short.npy", npy("<u2", raw<uint16_t>({1, 2, 3}), 5));
  auto short_file = corpus::openPretokenized((s / "short.npy").string(), "", 10);
  try {
    readIds(*short_file);
    FAIL() << "a short .npy must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("short.npy: .npy header says 5 ids but the file holds 3"), std::string::npos)
        << e.what();
  }
  writeFile(s / "long.npy", npy("<u2", raw<uint16_t>({1, 2, 3}), 2));
  auto long_file = corpus::openPretokenized((s / "long.npy").string(), "", 10);
  EXPECT_THROW(readIds(*long_file), InputError);
  std::string two_d = npy("<u2", raw<uint16_t>({1, 2, 3, 4, 5, 6}), 10);
  const std::string one_d = "'shape': (10,)";  // as long as (2,3): the data stays aligned
  two_d.replace(two_d.find(one_d), one_d.size(), "'shape': (2,3)");
  writeFile(s / "grid.npy", two_d);
  auto grid = corpus::openPretokenized((s / "grid.npy").string(), "", 10);
  EXPECT_EQ(readIds(*grid).size(), 6u);
}

}  // namespace
}  // namespace posgeom::testing
