#include "posgeom/io/safetensors_writer.h"

#include <cstring>

#include "posgeom/io/safetensors.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(SafetensorsWriter, RoundTripsValuesDtypesAndMetadata) {
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF32("f", {2, 2}, {1, 2, 3, 4});
  w.addF64("d", {1}, {0.125});
  w.addI64("i", {3}, {7, -8, 9});
  const uint8_t flags[2] = {1, 0};
  w.add("b", io::DType::kBool, {2}, flags, 2);
  w.setMetadata("k", "v");
  w.write(s / "x.safetensors");
  const auto f = io::SafetensorsFile::open(s / "x.safetensors");
  EXPECT_EQ(f.metadata().at("k"), "v");
  EXPECT_EQ(f.get("f").shape, (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(reinterpret_cast<const float*>(f.get("f").data)[3], 4.0f);
  EXPECT_EQ(reinterpret_cast<const double*>(f.get("d").data)[0], 0.125);
  EXPECT_EQ(reinterpret_cast<const int64_t*>(f.get("i").data)[1], -8);
  EXPECT_EQ(f.get("b").dtype, io::DType::kBool);
}

TEST(SafetensorsWriter, EveryTensorStartsAlignedToItsElementSize) {
  ScratchDir s;
  io::SafetensorsWriter w;
  const uint8_t flag[1] = {1};
  w.add("a_bool", io::DType::kBool, {1}, flag, 1);
  w.addF32("b_float", {1}, {1.0f});
  w.addF64("c_double", {1}, {2.0});
  w.write(s / "x.safetensors");
  const auto f = io::SafetensorsFile::open(s / "x.safetensors");
  for (const auto& [name, v] : f.tensors())
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(v.data) % io::dtypeSize(v.dtype), 0u) << name;
}

TEST(SafetensorsWriter, DataSectionIsEightByteAligned) {
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF64("a_name_of_odd_length", {1}, {1.0});
  w.write(s / "x.safetensors");
  const auto bytes = readFile(s / "x.safetensors");
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | static_cast<unsigned char>(bytes[static_cast<size_t>(i)]);
  EXPECT_EQ((8 + n) % 8, 0u);
}

TEST(SafetensorsWriter, RejectsAByteCountThatDoesNotMatchTheShape) {
  io::SafetensorsWriter w;
  const float v[3] = {};
  EXPECT_THROW(w.add("x", io::DType::kF32, {2}, v, sizeof(v)), std::logic_error);
}

TEST(SafetensorsWriter, DeferredTensorsAreFilledAtWriteTime) {
  ScratchDir s;
  io::SafetensorsWriter w;
  std::vector<double> source = {1, 2, 3, 4, 5, 6};
  int fills = 0;
  w.addDeferred("late", io::DType::kF64, {2, 3}, [&](std::byte* out) {
    ++fills;
    std::memcpy(out, source.data(), source.size() * sizeof(double));
  });
  w.addF32("now", {2}, {7.0f, 8.0f});
  source[5] = 60;  // read when written, not when added
  EXPECT_EQ(fills, 0);
  w.write(s / "t.safetensors");
  EXPECT_EQ(fills, 1);
  const auto f = io::SafetensorsFile::open(s / "t.safetensors");
  const auto& late = f.get("late");
  ASSERT_EQ(late.shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(reinterpret_cast<const double*>(late.data)[5], 60.0);
  EXPECT_EQ(reinterpret_cast<const float*>(f.get("now").data)[1], 8.0f);
}

}  // namespace
}  // namespace posgeom::testing
