#include "posgeom/model/model_config.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(ModelConfig, HeadDimAndSchemeNames) {
  model::ModelConfig c;
  c.hidden_size = 768;
  c.num_heads = 12;
  EXPECT_EQ(c.headDim(), 64);
  EXPECT_STREQ(model::positionSchemeName(model::PositionScheme::kAlibi), "ALiBi");
  EXPECT_STREQ(model::positionSchemeName(model::PositionScheme::kRope), "RoPE");
  EXPECT_STREQ(model::positionSchemeName(model::PositionScheme::kLearned), "learned absolute");
}

// A block rotates only in a RoPE model and where it is not one of the NoPE blocks; the
// description names those blocks.
TEST(ModelConfig, NoPeBlocksDoNotRotateAndAreNamed) {
  model::ModelConfig c;
  c.num_layers = 4;
  c.positions = model::PositionScheme::kRope;
  EXPECT_TRUE(c.rotates(0) && c.rotates(3));
  EXPECT_EQ(model::describePositions(c), "RoPE");
  c.unrotated_blocks = {false, true, false, true};
  EXPECT_TRUE(c.rotates(0));
  EXPECT_FALSE(c.rotates(1));
  EXPECT_FALSE(c.rotates(3));
  EXPECT_EQ(model::describePositions(c), "RoPE except blocks 1, 3 (NoPE)");
  c.rope.type = "yarn";
  EXPECT_EQ(model::describePositions(c), "RoPE with yarn scaling except blocks 1, 3 (NoPE)");
  c.rope.type = "default";
  c.positions = model::PositionScheme::kLearned;
  EXPECT_FALSE(c.rotates(0));
  EXPECT_EQ(model::describePositions(c), "learned absolute");
}

// The part of each head that turns (partial rotary) and interleaved pairs are named, as
// the heads turn them.
TEST(ModelConfig, PartialAndInterleavedRotaryAreNamed) {
  model::ModelConfig c;
  c.num_layers = 2;
  c.hidden_size = 64;
  c.num_heads = 4;
  c.positions = model::PositionScheme::kRope;
  c.rope.partial_rotary_factor = 0.25;
  EXPECT_EQ(model::describePositions(c), "RoPE on the first 4 of each head's 16 dims");
  c.rope.partial_rotary_factor = 1;
  c.rope.interleaved = true;
  c.rope.type = "linear";
  EXPECT_EQ(model::describePositions(c), "RoPE with linear scaling in interleaved pairs");
  c.positions = model::PositionScheme::kAlibi;
  EXPECT_EQ(model::describePositions(c), "ALiBi");
}

// T5's bias says its buckets and how far they reach; no block rotates.
TEST(ModelConfig, RelativeBiasNamesItsBuckets) {
  model::ModelConfig c;
  c.num_layers = 2;
  c.positions = model::PositionScheme::kRelativeBias;
  c.relative_buckets = 32;
  c.relative_max_distance = 128;
  EXPECT_FALSE(c.rotates(0));
  EXPECT_EQ(model::describePositions(c), "relative bias (32 buckets out to distance 128)");
}

}  // namespace
}  // namespace posgeom::testing
