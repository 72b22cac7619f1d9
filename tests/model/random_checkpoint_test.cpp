#include "posgeom/model/random_checkpoint.h"

#include "posgeom/base/error.h"
#include "posgeom/model/load/loader.h"
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

INSTANTIATE_TEST_SUITE_P(Archs, RandomCheckpointPerArch, ::testing::Values("gpt2", "bert", "bloom", "llama"));

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

TEST(RandomCheckpoint, RejectsImpossibleShapes) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.hidden_size = 30;
  spec.heads = 4;
  EXPECT_THROW(model::writeRandomCheckpoint(spec, s / "m"), InputError);
  spec = {};
  spec.model_type = "t5";
  EXPECT_THROW(model::writeRandomCheckpoint(spec, s / "m"), InputError);
}

}  // namespace
}  // namespace posgeom::testing
