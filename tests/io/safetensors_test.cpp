#include "posgeom/io/safetensors.h"

#include <cstring>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

std::string parseError(const std::string& bytes) {
  try {
    io::parseSafetensorsHeader(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size(), "f.safetensors");
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

const std::string kEightBytes(8, '\x01');

TEST(Safetensors, ParsesAValidHeaderWithMetadata) {
  const auto bytes = safetensorsBytes(
      R"({"__metadata__":{"format":"pt"},"b":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]},)"
      R"("a":{"dtype":"F32","shape":[1],"data_offsets":[0,4]}})",
      kEightBytes);
  const auto h = io::parseSafetensorsHeader(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size(), "x");
  ASSERT_EQ(h.entries.size(), 2u);
  EXPECT_EQ(h.entries[0].name, "a");  // sorted by offset
  EXPECT_EQ(h.entries[1].dtype, io::DType::kBF16);
  EXPECT_EQ(h.metadata.at("format"), "pt");
}

TEST(Safetensors, AcceptsEveryDtype) {
  for (const char* dt : {"F64", "F32", "F16", "BF16", "I64", "I32", "U8", "BOOL"}) {
    const auto size = io::dtypeSize(*io::parseDType(dt));
    const auto bytes = safetensorsBytes(std::string(R"({"t":{"dtype":")") + dt + R"(","shape":[2],"data_offsets":[0,)" +
                                            std::to_string(2 * size) + "]}}",
                                        std::string(2 * size, '\0'));
    EXPECT_EQ(parseError(bytes), "") << dt;
  }
}

TEST(Safetensors, ScalarsAndEmptyTensors) {
  EXPECT_EQ(parseError(safetensorsBytes(R"({"s":{"dtype":"F32","shape":[],"data_offsets":[0,4]},)"
                                        R"("e":{"dtype":"F32","shape":[0,3],"data_offsets":[4,4]}})",
                                        std::string(4, '\0'))),
            "");
}

struct Malformed {
  const char* what;
  std::string bytes;
  const char* message;
};

void PrintTo(const Malformed& m, std::ostream* os) { *os << m.what; }

class SafetensorsMalformed : public ::testing::TestWithParam<Malformed> {};

TEST_P(SafetensorsMalformed, IsRejectedWithTheFileAndTheFault) {
  const auto msg = parseError(GetParam().bytes);
  EXPECT_EQ(msg.rfind("f.safetensors: ", 0), 0u) << msg;
  EXPECT_NE(msg.find(GetParam().message), std::string::npos) << msg;
  EXPECT_EQ(msg.find('\n'), std::string::npos);
}

const std::string kOneF32 = R"({"t":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";

INSTANTIATE_TEST_SUITE_P(
    Cases, SafetensorsMalformed,
    ::testing::Values(
        Malformed{"truncated", std::string("\x10\x00\x00", 3), "truncated"},
        Malformed{"length past end", safetensorsBytes(kOneF32, kEightBytes, 1000), "runs past the end"},
        Malformed{"gigabyte header", safetensorsBytes(kOneF32, kEightBytes, 1ll << 40), "runs past the end"},
        Malformed{"bad json", safetensorsBytes(R"({"t": {"dtype": "F32",)", kEightBytes), "not valid JSON"},
        Malformed{"not an object", safetensorsBytes("[1,2]", ""), "not a JSON object"},
        Malformed{"unknown dtype", safetensorsBytes(R"({"t":{"dtype":"F8","shape":[8],"data_offsets":[0,8]}})", kEightBytes),
                  "unsupported dtype 'F8'"},
        Malformed{"negative dim", safetensorsBytes(R"({"t":{"dtype":"U8","shape":[-8],"data_offsets":[0,8]}})", kEightBytes),
                  "non-negative"},
        Malformed{"dtype shape mismatch",
                  safetensorsBytes(R"({"t":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}})", kEightBytes),
                  "8 bytes of data but dtype F32 and shape [3] need 12"},
        Malformed{"offsets out of range",
                  safetensorsBytes(R"({"t":{"dtype":"F32","shape":[4],"data_offsets":[0,16]}})", kEightBytes),
                  "past the 8 bytes of data"},
        Malformed{"offsets reversed",
                  safetensorsBytes(R"({"t":{"dtype":"F32","shape":[0],"data_offsets":[8,0]}})", kEightBytes),
                  "end before they begin"},
        Malformed{"overlap",
                  safetensorsBytes(R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},)"
                                   R"("b":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
                                   kEightBytes),
                  "overlap"},
        Malformed{"metadata not strings",
                  safetensorsBytes(R"({"__metadata__":{"n":1}})", ""), "__metadata__ value for 'n'"},
        Malformed{"missing offsets", safetensorsBytes(R"({"t":{"dtype":"F32","shape":[2]}})", kEightBytes),
                  "data_offsets must be"},
        Malformed{"shape overflow",
                  safetensorsBytes(R"({"t":{"dtype":"F64","shape":[4294967296,4294967296],"data_offsets":[0,8]}})",
                                   kEightBytes),
                  "overflows"}),
    [](const auto& param_info) {
      std::string n = param_info.param.what;
      for (auto& c : n)
        if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
      return n;
    });

TEST(SafetensorsFile, OpensMapsAndFindsTensors) {
  ScratchDir s;
  const float values[2] = {1.5f, -3.0f};
  writeFile(s / "a.safetensors", safetensorsBytes(kOneF32, std::string(reinterpret_cast<const char*>(values), 8)));
  const auto f = io::SafetensorsFile::open(s / "a.safetensors");
  const auto& t = f.get("t");
  EXPECT_EQ(t.numel(), 2);
  float second = 0;  // the data of a hand-made file need not be aligned
  std::memcpy(&second, t.data + 4, 4);
  EXPECT_EQ(second, -3.0f);
  EXPECT_EQ(f.find("nope"), nullptr);
  EXPECT_THROW(f.get("nope"), InputError);
}

TEST(SafetensorsFile, ErrorsNameThePath) {
  ScratchDir s;
  writeFile(s / "bad.safetensors", "xyz");
  try {
    io::SafetensorsFile::open(s / "bad.safetensors");
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.safetensors: truncated"), std::string::npos);
  }
}

TEST(Safetensors, ShapeToString) { EXPECT_EQ(io::shapeToString({2, 24, 64}), "[2, 24, 64]"); }

}  // namespace
}  // namespace posgeom::testing
