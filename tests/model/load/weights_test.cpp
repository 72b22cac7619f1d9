#include "posgeom/model/load/weights.h"

#include <limits>

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/random_checkpoint.h"
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

// A tensor transformers keeps in float32 (DeepSeek-V3's routing correction bias) stays float32
// under bfloat16, exactly the stored values; the others come to bfloat16.
TEST(Weights, AFloat32SpecStaysFloat32) {
  const auto dir = hfFixtureDir("hf-deepseek-v3");
  const auto config = model::loadModelConfig(dir);
  const model::Weights w(io::Checkpoint::open(dir), model::architectureFor("deepseek_v3", ""), config,
                         model::Numerics::parse("bfloat16", "cpu"));
  const auto bias = w.get("layers.1.mlp.gate.e_score_correction_bias");
  EXPECT_EQ(bias.scalar_type(), at::kFloat);
  const auto stored = io::SafetensorsFile::open(dir / "model.safetensors");
  EXPECT_TRUE(at::equal(bias, model::tensorFromView(stored.get("model.layers.1.mlp.gate.e_score_correction_bias"))));
  EXPECT_FALSE(at::equal(bias, bias.to(at::kBFloat16).to(at::kFloat)));  // bfloat16 would have moved it
  EXPECT_EQ(w.get("layers.1.mlp.gate.weight").scalar_type(), at::kBFloat16);
}

// A 1-layer, 16-wide random GPT-2 whose weights a test then damages.
void writeTinyGpt2(const std::filesystem::path& dir) {
  model::RandomCheckpointSpec spec;
  spec.layers = 1;
  spec.hidden_size = 16;
  spec.heads = 2;
  spec.vocab_size = 20;
  spec.max_positions = 8;
  model::writeRandomCheckpoint(spec, dir);
}

TEST(Weights, NanOrInfInAWeightIsNamed) {
  ScratchDir s;
  writeTinyGpt2(s / "m");
  const auto file = io::SafetensorsFile::open(s / "m/model.safetensors");
  io::SafetensorsWriter writer;
  for (const auto& [name, view] : file.tensors()) {
    auto t = model::tensorFromView(view).to(at::kFloat).contiguous().clone();
    if (name == "h.0.mlp.c_fc.weight") t[3][5] = std::numeric_limits<float>::infinity();
    writer.add(name, io::DType::kF32, t.sizes().vec(), t.data_ptr<float>(), static_cast<std::size_t>(t.numel()) * sizeof(float));
  }
  writer.write(s / "m/model.safetensors");
  const auto config = model::loadModelConfig(s / "m");
  try {
    model::Weights(io::Checkpoint::open(s / "m"), model::architectureFor("gpt2", ""), config, model::Numerics::parse("float32", "cpu"));
    FAIL() << "an Inf weight must be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (s / "m/model.safetensors").string() + ": tensor 'h.0.mlp.c_fc.weight' holds NaN or Inf");
  }
}

// An F64 1e300 is finite in the file but not in float32: the message says it overflows the
// compute precision, not that the file holds NaN or Inf.
TEST(Weights, AFiniteValueBeyondTheComputePrecisionIsNamedAsSuch) {
  ScratchDir s;
  writeTinyGpt2(s / "m");
  const auto file = io::SafetensorsFile::open(s / "m/model.safetensors");
  io::SafetensorsWriter writer;
  for (const auto& [name, view] : file.tensors()) {
    auto t = model::tensorFromView(view).to(at::kDouble).contiguous().clone();
    if (name == "h.0.mlp.c_fc.weight") t[3][5] = -1e300;
    writer.add(name, io::DType::kF64, t.sizes().vec(), t.data_ptr<double>(), static_cast<std::size_t>(t.numel()) * sizeof(double));
  }
  writer.write(s / "m/model.safetensors");
  const auto config = model::loadModelConfig(s / "m");
  const auto& arch = model::architectureFor("gpt2", "");
  try {
    model::Weights(io::Checkpoint::open(s / "m"), arch, config, model::Numerics::parse("float32", "cpu"));
    FAIL() << "a weight beyond float32 must be refused";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), (s / "m/model.safetensors").string() +
                                         ": tensor 'h.0.mlp.c_fc.weight' holds 1e+300, beyond the range of float32, the "
                                         "precision the model is computed in (--dtype)");
  }
}

}  // namespace
}  // namespace posgeom::testing
