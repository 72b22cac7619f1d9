#include "golden.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// OPT against transformers' own model and outputs (tools/hf-goldens): positions two rows into
// their table; and OPT-350m's shape, post-LN with embeddings narrower than the blocks.
INSTANTIATE_TEST_SUITE_P(HfOpt, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-opt")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfOpt350m, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-opt-350m")), goldenCaseName);

TEST(Opt, TheNarrowEmbeddingVariantIsReadAsSuch) {
  const auto numerics = model::Numerics::parse("float32", "cpu");
  const auto narrow = model::loadModel(hfFixtureDir("hf-opt-350m"), numerics);
  EXPECT_TRUE(narrow.model->config().post_norm);
  EXPECT_EQ(narrow.model->config().embedding_width, 32);
  const auto plain = model::loadModel(hfFixtureDir("hf-opt"), numerics);
  EXPECT_FALSE(plain.model->config().post_norm);
  EXPECT_EQ(plain.model->config().embedding_width, 48);
}

}  // namespace
}  // namespace posgeom::testing
