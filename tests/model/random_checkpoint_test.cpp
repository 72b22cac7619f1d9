#include "posgeom/model/random_checkpoint.h"

#include "posgeom/model/architecture.h"

#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

class RandomCheckpointPerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(RandomCheckpointPerArch, WritesALoadableCheckpoint) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.model_type = GetParam();
  spec.layers = 2;
  spec.hidden_size = 32;
  spec.heads = 4;
  spec.kv_heads = GetParam() == "llama" ? 2 : 0;
  spec.vocab_size = 100;
  spec.max_positions = 32;
  model::writeRandomCheckpoint(spec, s / "m");
  const auto loaded = model::loadModel(s / "m", model::Numerics::parse("float32", "cpu"));
  EXPECT_EQ(loaded.model->config().num_layers, 2);
  EXPECT_EQ(loaded.model->config().num_kv_heads, GetParam() == "llama" ? 2 : 4);
  model::ForwardRequest r;
  r.ids = at::randint(0, 100, {2, 16}, at::kLong);
  r.want_logits = true;
  const auto out = loaded.model->forward(r);
  if (loaded.model->hasLmHead()) {
    ASSERT_TRUE(out.logits.defined());
    EXPECT_EQ(out.logits.sizes(), (at::IntArrayRef{2, 16, 100}));
    EXPECT_TRUE(at::isfinite(out.logits).all().item<bool>());
  }
}

// Every architecture: what its config writer says must be what its tensor list and reader expect.
INSTANTIATE_TEST_SUITE_P(Archs, RandomCheckpointPerArch, ::testing::ValuesIn(model::supportedModelTypes()));

TEST(RandomCheckpoint, SameSeedSameBytesOtherSeedOtherBytes) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  model::writeRandomCheckpoint(spec, s / "a");
  model::writeRandomCheckpoint(spec, s / "b");
  spec.seed = 1;
  model::writeRandomCheckpoint(spec, s / "c");
  EXPECT_EQ(readFile(s / "a/model.safetensors"), readFile(s / "b/model.safetensors"));
  EXPECT_NE(readFile(s / "a/model.safetensors"), readFile(s / "c/model.safetensors"));
}

// Above 2^26 parameters each tensor is drawn from its own seed, in parallel chunks: still
// the same bytes for the same seed, normal with the asked spread, and no two tensors alike.
TEST(RandomCheckpoint, LargeCheckpointsAreDrawnInParallelAndStillReproducible) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.layers = 1;
  spec.hidden_size = 32;
  spec.heads = 2;
  spec.vocab_size = (int64_t{1} << 26) / 32 + 1000;  // the embedding alone passes the bound
  spec.init_std = 0.5;
  model::writeRandomCheckpoint(spec, s / "a");
  model::writeRandomCheckpoint(spec, s / "b");
  EXPECT_EQ(readFile(s / "a/model.safetensors"), readFile(s / "b/model.safetensors"));
  const auto file = io::SafetensorsFile::open(s / "a/model.safetensors");
  auto tensor = [&](const std::string& name) { return model::tensorFromView(file.get(name)).to(at::kDouble); };
  const auto embedding = tensor("wte.weight");
  EXPECT_NEAR(embedding.std().item<double>(), 0.5, 0.001);
  EXPECT_NEAR(embedding.mean().item<double>(), 0.0, 0.001);
  // Chunks of 2^22 values each from their own generator: neighbouring chunks differ.
  const auto flat = embedding.reshape({-1});
  EXPECT_FALSE(at::equal(flat.narrow(0, 0, 1000), flat.narrow(0, int64_t{1} << 22, 1000)));
  EXPECT_FALSE(at::equal(tensor("h.0.attn.c_attn.weight").reshape({-1}).narrow(0, 0, 1000),
                         tensor("h.0.mlp.c_fc.weight").reshape({-1}).narrow(0, 0, 1000)));
  // Stored in bfloat16: the same draws, each rounded to nearest (as ATen rounds).
  spec.storage = io::DType::kBF16;
  model::writeRandomCheckpoint(spec, s / "c");
  const auto half = io::SafetensorsFile::open(s / "c/model.safetensors");
  for (const auto* name : {"wte.weight", "h.0.mlp.c_fc.weight"}) {
    EXPECT_EQ(half.get(name).dtype, io::DType::kBF16) << name;
    EXPECT_TRUE(at::equal(model::tensorFromView(half.get(name)), model::tensorFromView(file.get(name)).to(at::kBFloat16))) << name;
  }
}

// A small checkpoint (drawn from one stream) in bfloat16: its float32 twin's values rounded,
// and it loads as any checkpoint does.
TEST(RandomCheckpoint, Bfloat16StorageRoundsTheFloat32Draws) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.model_type = "llama";
  model::writeRandomCheckpoint(spec, s / "f32");
  spec.storage = io::DType::kBF16;
  model::writeRandomCheckpoint(spec, s / "bf16");
  const auto f32 = io::SafetensorsFile::open(s / "f32/model.safetensors");
  const auto bf16 = io::SafetensorsFile::open(s / "bf16/model.safetensors");
  ASSERT_EQ(bf16.tensors().size(), f32.tensors().size());
  for (const auto& [name, view] : f32.tensors())
    EXPECT_TRUE(at::equal(model::tensorFromView(bf16.get(name)), model::tensorFromView(view).to(at::kBFloat16))) << name;
  EXPECT_LT(std::filesystem::file_size(s / "bf16/model.safetensors"), std::filesystem::file_size(s / "f32/model.safetensors") * 6 / 10);
  spec.storage = io::DType::kF16;
  EXPECT_THROW(model::writeRandomCheckpoint(spec, s / "f16"), InputError);
}

TEST(RandomCheckpoint, RejectsImpossibleShapes) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.hidden_size = 30;
  spec.heads = 4;
  EXPECT_THROW(model::writeRandomCheckpoint(spec, s / "m"), InputError);
  spec = {};
  spec.model_type = "xlnet";
  EXPECT_THROW(model::writeRandomCheckpoint(spec, s / "m"), InputError);
  // A shape the family's reader refuses (heads 9 wide cannot turn in pairs) is refused
  // before anything is written, not written for every later command to fail on.
  spec = {};
  spec.model_type = "llama";
  spec.hidden_size = 72;
  spec.heads = 8;
  try {
    model::writeRandomCheckpoint(spec, s / "odd");
    FAIL() << "an odd rotary head must be refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("head_dim 9"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(s / "odd"));
}

// A width the family's config has no key for would be written into tensors its config reads
// back otherwise (a checkpoint no command loads): refused, naming the option, before any write.
TEST(RandomCheckpoint, AWidthTheFamilysConfigCannotSayIsRefused) {
  ScratchDir s;
  auto refusal = [&](const std::string& type, int64_t mlp, int64_t kv_heads) {
    model::RandomCheckpointSpec spec;
    spec.model_type = type, spec.hidden_size = 32, spec.heads = 4, spec.intermediate_size = mlp, spec.kv_heads = kv_heads;
    try {
      model::writeRandomCheckpoint(spec, s / type);
    } catch (const InputError& e) {
      EXPECT_FALSE(std::filesystem::exists(s / type));
      return std::string(e.what());
    }
    return std::string();
  };
  EXPECT_NE(refusal("bloom", 100, 0).find("--mlp: 100: a BLOOM config has no MLP width of its own (it reads back as 128)"), std::string::npos);
  EXPECT_NE(refusal("mpt", 64, 0).find("--mlp"), std::string::npos);
  EXPECT_NE(refusal("gpt2", 0, 2).find("--kv-heads: 2: a GPT-2 config has no key/value heads of its own (it reads back as 4)"), std::string::npos);
  // Where the config says it, the same sizes are written and read back.
  EXPECT_EQ(refusal("llama", 100, 2), "");
  EXPECT_EQ(model::loadModelConfig(s / "llama").intermediate_size, 100);
  EXPECT_EQ(refusal("gpt2", 100, 0), "");  // GPT-2's n_inner
}

// Far too large: refused before anything is written (it used to end in bad_alloc, exit 3,
// with an empty directory left), naming what does not fit.
TEST(RandomCheckpoint, ACheckpointTheMachineCannotHoldIsRefusedFirst) {
  ScratchDir s;
  auto message = [&](const model::RandomCheckpointSpec& spec) {
    try {
      model::writeRandomCheckpoint(spec, s / "huge/m");
    } catch (const InputError& e) {
      return std::string(e.what());
    }
    return std::string("written");
  };
  model::RandomCheckpointSpec wide;
  wide.hidden_size = 1 << 20;
  wide.heads = 1 << 10;
  wide.vocab_size = 1 << 20;  // the embedding alone: 2^40 values, 4 TiB
  EXPECT_NE(message(wide).find("random-model: the checkpoint would take "), std::string::npos) << message(wide);
  model::RandomCheckpointSpec deep;
  deep.layers = 1000000000;
  EXPECT_EQ(message(deep), "--layers: 1000000000 is more than 4096");
  EXPECT_FALSE(std::filesystem::exists(s / "huge"));
}

}  // namespace
}  // namespace posgeom::testing
