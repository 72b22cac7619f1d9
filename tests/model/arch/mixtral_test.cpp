#include <nlohmann/json.hpp>

#include "golden.h"
#include "input_error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/flops.h"
#include "posgeom/model/load/loader.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Mixtral against transformers' own model and outputs (tools/hf-goldens): a mixture of 4
// experts in every block, 2 a token, renormalised; two key/value heads for four query heads.
INSTANTIATE_TEST_SUITE_P(HfMixtral, GoldenParity, ::testing::ValuesIn(hfGoldenCases("hf-mixtral")), goldenCaseName);

TEST(Mixtral, EveryBlockIsAMixtureAndItsFlopsCountTheExpertsATokenRuns) {
  const auto config = model::loadModelConfig(hfFixtureDir("hf-mixtral"));
  EXPECT_EQ(config.moe.experts, 4);
  EXPECT_EQ(config.moe.experts_per_token, 2);
  EXPECT_EQ(config.moe.expert_size, 40);
  EXPECT_TRUE(config.moe.normalize_top_k);
  EXPECT_FALSE(config.moe.weights_in_compute_dtype);
  EXPECT_TRUE(config.moe.sparse(0) && config.moe.sparse(1));
  // The products a token meets: attention's q, k, v, o, the router, and half the experts.
  const auto specs = model::architectureFor("mixtral", "test").tensors(config);
  const double attention = 48.0 * 48 + 2 * 48.0 * 24 + 48.0 * 48, router = 4.0 * 48, experts = 4 * 3 * 40.0 * 48;
  EXPECT_DOUBLE_EQ(model::activeProductParameters(specs), 2 * (attention + router + experts / 2));
  EXPECT_EQ(model::productParameters(specs), static_cast<int64_t>(2 * (attention + router + experts)));
  // A router picks which neurons a token reaches: no neuron circuit.
  EXPECT_FALSE(model::loadModel(hfFixtureDir("hf-mixtral"), model::Numerics::parse("float32", "cpu")).model->neuronCircuit(8).has_value());
}

TEST(Mixtral, DefaultsAreTransformersAndMoreExpertsATokenThanThereAreIsRefused) {
  ScratchDir s;
  const auto defaults = model::loadModelConfig(editedHfFixture(s.path(), "hf-mixtral", [](nlohmann::json& j) {
    for (const char* key : {"num_local_experts", "num_experts_per_tok", "rms_norm_eps", "rope_theta", "rope_parameters"}) j.erase(key);
  }));
  EXPECT_EQ(defaults.moe.experts, 8);
  EXPECT_EQ(defaults.moe.experts_per_token, 2);
  EXPECT_EQ(defaults.norm_eps, 1e-5);
  EXPECT_EQ(defaults.rope.theta, 1e6);
  ScratchDir t;
  const auto refusal = inputErrorOf([&] {
    model::loadModelConfig(editedHfFixture(t.path(), "hf-mixtral", [](nlohmann::json& j) { j["num_experts_per_tok"] = 5; }));
  });
  EXPECT_NE(refusal.find("num_experts_per_tok (5) is more than the 4 experts (num_local_experts)"), std::string::npos) << refusal;
  // An expert count no checkpoint beside it could hold is refused before a tensor list is
  // sized from it (a billion experts would take minutes to list).
  ScratchDir u;
  const auto absurd = inputErrorOf([&] {
    model::loadModelConfig(editedHfFixture(u.path(), "hf-mixtral", [](nlohmann::json& j) { j["num_local_experts"] = 1000000000; }));
  });
  EXPECT_NE(absurd.find("its 1000000000 experts a block cannot be in the"), std::string::npos) << absurd;
}

}  // namespace
}  // namespace posgeom::testing
