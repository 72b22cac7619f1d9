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

}  // namespace
}  // namespace posgeom::testing
