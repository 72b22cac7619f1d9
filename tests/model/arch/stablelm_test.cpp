#include <nlohmann/json.hpp>

#include "golden.h"
#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// StableLM against transformers' own model and outputs (tools/hf-goldens): LayerNorms with
// weights and biases, half of each 12-wide head turning, biases on q, k and v only, two
// key/value heads for four query heads.
INSTANTIATE_TEST_SUITE_P(HfStableLm, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-stablelm")), goldenCaseName);

TEST(StableLm, AQuarterOfEachHeadTurnsAndQkvBiasesFollowTheConfig) {
  const auto given = model::loadModelConfig(hfFixtureDir("hf-stablelm"));
  EXPECT_EQ(given.rope.partial_rotary_factor, 0.5);
  EXPECT_TRUE(given.qkv_bias);
  EXPECT_FALSE(given.attention_bias);  // no bias on o_proj
  EXPECT_EQ(given.norm_eps, 1e-5);
  ScratchDir a, b;
  // transformers' default when no factor is given anywhere: a quarter (16-wide heads here,
  // so that four dims turn).
  const auto absent = model::loadModelConfig(editedHfFixture(a.path(), "hf-stablelm", [](nlohmann::json& j) {
    j["rope_parameters"].erase("partial_rotary_factor");
    j["num_attention_heads"] = 3;
    j["num_key_value_heads"] = 3;
  }));
  EXPECT_EQ(absent.rope.partial_rotary_factor, 0.25);
  const auto unbiased = model::loadModelConfig(editedHfFixture(b.path(), "hf-stablelm", [](nlohmann::json& j) {
    j.erase("use_qkv_bias");
  }));
  EXPECT_FALSE(unbiased.qkv_bias);
  const auto specs = model::architectureFor("stablelm", "test").tensors(unbiased);
  for (const auto& spec : specs) EXPECT_EQ(spec.name.find("q_proj.bias"), std::string::npos) << spec.name;
}

// What posgeom's StableLM does not do is refused by its key, never approximated: the odd
// rotary part a quarter of a 12-wide head would be, StableLM-2-12B's per-head q/k norms and
// its parallel residual.
TEST(StableLm, WhatItDoesNotDoIsRefusedByName) {
  const std::vector<std::pair<std::string, nlohmann::json>> edits{
      {"qk_layernorm", true}, {"use_parallel_residual", true}, {"partial_rotary_factor", 0.25}};
  for (const auto& [key, value] : edits) {
    ScratchDir s;
    try {
      model::loadModelConfig(editedHfFixture(s.path(), "hf-stablelm", [&](nlohmann::json& j) {
        if (key == "partial_rotary_factor") j["rope_parameters"].erase(key);
        j[key] = value;
      }));
      ADD_FAILURE() << key << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(key), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace posgeom::testing
