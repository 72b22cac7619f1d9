#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// DeBERTa against transformers' own models and outputs (tools/hf-goldens): v3's shape
// (shared maps, LayerNormed relative embeddings, 8 log buckets out to 20, no absolute
// positions) and v2's older one (pos_key_proj / pos_query_proj, 12 distances a side clamped,
// absolute positions and token type 0, embeddings projected from 32).
INSTANTIATE_TEST_SUITE_P(HfDebertaV3, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-deberta-v3")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfDebertaV2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-deberta-v2")), goldenCaseName);

TEST(DebertaV2, ReadsItsDisentangledAttention) {
  const auto v3 = model::loadModelConfig(hfFixtureDir("hf-deberta-v3"));
  EXPECT_EQ(v3.positions, model::PositionScheme::kDisentangled);
  EXPECT_TRUE(v3.disentangled.c2p && v3.disentangled.p2c && v3.disentangled.shared_maps && v3.disentangled.normed_embeddings);
  EXPECT_EQ(v3.disentangled.span, 8);
  EXPECT_FALSE(v3.disentangled.absolute_positions);
  const auto v2 = model::loadModelConfig(hfFixtureDir("hf-deberta-v2"));
  EXPECT_EQ(v2.disentangled.span, 12);  // no buckets: max_relative_positions
  EXPECT_TRUE(v2.disentangled.absolute_positions);
  EXPECT_EQ(v2.disentangled.embedding_size, 32);
  EXPECT_EQ(v2.type_vocab_size, 2);
}

TEST(DebertaV2, RefusesWhatItCannotRunByName) {
  auto refused = [](const std::function<void(nlohmann::json&)>& edit) {
    ScratchDir s;
    return inputErrorOf([&] { model::loadModelConfig(editedHfFixture(s.path(), "hf-deberta-v3", edit)); });
  };
  EXPECT_NE(refused([](nlohmann::json& j) { j["conv_kernel_size"] = 3; }).find("conv_kernel_size > 0"), std::string::npos);
  EXPECT_NE(refused([](nlohmann::json& j) { j["pos_att_type"] = {"p2p"}; }).find("pos_att_type 'p2p' is not supported"), std::string::npos);
}

}  // namespace
}  // namespace posgeom::testing
