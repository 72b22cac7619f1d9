#include <functional>
#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Falcon's layouts against transformers' own model and outputs (tools/hf-goldens):
// Falcon-40B's (new architecture, 4 query heads in 2 groups, two norms), Falcon2-11B's (one
// norm, biases, 6 heads in 3 groups), Falcon-7B's (multi-query) and the older multi-head
// layout in series with biases.
INSTANTIATE_TEST_SUITE_P(HfFalcon, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-falcon")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfFalcon2, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-falcon2")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfFalcon7b, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-falcon-7b")), goldenCaseName);
INSTANTIATE_TEST_SUITE_P(HfFalconSerial, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-falcon-serial")), goldenCaseName);

TEST(Falcon, EachLayoutReadsItsHeadsAndNorms) {
  const auto big = model::loadModelConfig(hfFixtureDir("hf-falcon"));
  EXPECT_EQ(big.num_kv_heads, 2);
  EXPECT_TRUE(big.parallel_residual);
  EXPECT_TRUE(big.parallel_norms);
  const auto two = model::loadModelConfig(hfFixtureDir("hf-falcon2"));
  EXPECT_EQ(two.num_kv_heads, 3);
  EXPECT_FALSE(two.parallel_norms);
  EXPECT_TRUE(two.attention_bias);
  const auto seven = model::loadModelConfig(hfFixtureDir("hf-falcon-7b"));
  EXPECT_EQ(seven.num_kv_heads, 1);  // multi_query: num_kv_heads (3) is not read, as transformers
  EXPECT_EQ(seven.intermediate_size, 4 * 48);
  const auto serial = model::loadModelConfig(hfFixtureDir("hf-falcon-serial"));
  EXPECT_EQ(serial.num_kv_heads, 4);
  EXPECT_FALSE(serial.parallel_residual);
}

TEST(Falcon, WhatTransformersCannotRunOrPosgeomDoesNotReadIsRefusedByName) {
  const std::vector<std::tuple<std::string, std::string, std::function<void(nlohmann::json&)>>> cases = {
      {"hf-falcon-serial", "alibi = true (Falcon-RW) is not supported", [](nlohmann::json& j) { j["alibi"] = true; }},
      {"hf-falcon", "new_decoder_architecture without parallel_attn", [](nlohmann::json& j) { j["parallel_attn"] = false; }},
      {"hf-falcon", "num_attention_heads is not a multiple of num_kv_heads", [](nlohmann::json& j) { j["num_kv_heads"] = 3; }},
      {"hf-falcon-serial", "num_kv_heads other than num_attention_heads needs new_decoder_architecture",
       [](nlohmann::json& j) { j["num_kv_heads"] = 2; }},
      {"hf-falcon-7b", "num_ln_in_parallel_attn 2 is not supported", [](nlohmann::json& j) { j["num_ln_in_parallel_attn"] = 2; }},
      {"hf-falcon", "num_ln_in_parallel_attn 3 is not supported", [](nlohmann::json& j) { j["num_ln_in_parallel_attn"] = 3; }},
  };
  for (const auto& [fixture, message, edit] : cases) {
    ScratchDir s;
    const auto error = inputErrorOf([&, &fixture = fixture, &edit = edit] {
      model::loadModelConfig(editedHfFixture(s.path(), fixture, edit));
    });
    EXPECT_NE(error.find(message), std::string::npos) << message << " must be refused; got: " << error;
  }
}

// A random Falcon's config reads back as the layout it was made with: grouped heads in the
// new architecture, one key/value head as multi-query, as many as the query heads per head.
TEST(Falcon, AConfigFromSizesRoundTripsEachLayout) {
  const auto& arch = model::architectureFor("falcon", "test");
  for (const int64_t kv : {int64_t{2}, int64_t{1}, int64_t{4}}) {
    model::ModelShape shape;
    shape.layers = 2, shape.hidden_size = 48, shape.heads = 4, shape.kv_heads = kv, shape.vocab_size = 50;
    shape.max_positions = 32;
    const auto from_sizes = arch.config_for_shape(shape);
    const auto reread = arch.parse_config(io::JsonConfig(arch.to_config_json(from_sizes), "test"));
    EXPECT_EQ(reread.num_kv_heads, kv);
    EXPECT_EQ(reread.parallel_norms, kv == 2) << kv;
    EXPECT_TRUE(reread.parallel_residual) << kv;
    EXPECT_EQ(arch.tensors(reread).size(), arch.tensors(from_sizes).size()) << kv;
  }
}

}  // namespace
}  // namespace posgeom::testing
