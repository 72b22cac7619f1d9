#include "posgeom/model/weights.h"

#include "posgeom/io/safetensors_writer.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Weights, ViewsOfEveryDtypeKeepTheirValues) {
  ScratchDir s;
  io::SafetensorsWriter w;
  const std::vector<float> f{1.5f, -2.25f, 3.0f};
  w.addF32("f", {3}, f);
  const uint16_t bf16[] = {0x3fc0, 0xc010};  // 1.5, -2.25
  w.add("bf", io::DType::kBF16, {2}, bf16, sizeof(bf16));
  const uint16_t f16[] = {0x3e00, 0xc080};  // 1.5, -2.25
  w.add("h", io::DType::kF16, {2}, f16, sizeof(f16));
  w.write(s / "t.safetensors");
  const auto file = io::SafetensorsFile::open(s / "t.safetensors");
  EXPECT_TRUE(at::equal(model::tensorFromView(file.get("f")), at::tensor({1.5f, -2.25f, 3.0f})));
  EXPECT_TRUE(at::equal(model::tensorFromView(file.get("bf")).to(at::kFloat), at::tensor({1.5f, -2.25f})));
  EXPECT_TRUE(at::equal(model::tensorFromView(file.get("h")).to(at::kFloat), at::tensor({1.5f, -2.25f})));
}

TEST(Weights, AViewOutlivesItsFile) {
  ScratchDir s;
  io::SafetensorsWriter w;
  w.addF32("x", {2}, {4.0f, 5.0f});
  w.write(s / "t.safetensors");
  at::Tensor t;
  {
    const auto file = io::SafetensorsFile::open(s / "t.safetensors");
    t = model::tensorFromView(file.get("x"));
  }
  EXPECT_FLOAT_EQ(t[1].item<float>(), 5.0f);  // would read unmapped memory if the view did not hold the mapping
}

TEST(Weights, BringsTensorsToTheComputePrecision) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  const auto dir = sharedDir() / "fixtures/models/tiny-llama";
  const auto config = model::loadModelConfig(dir);
  const model::Weights w(io::Checkpoint::open(dir), model::architectureFor("llama", ""), config,
                         model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(w.get("lm_head.weight").scalar_type(), at::kFloat);  // stored as BF16 in the second shard
  EXPECT_TRUE(w.has("layers.2.mlp.down_proj.weight"));
  EXPECT_THROW(w.get("no.such.tensor"), std::logic_error);
}

}  // namespace
}  // namespace posgeom::testing
