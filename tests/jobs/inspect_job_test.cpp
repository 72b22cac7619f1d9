#include "posgeom/jobs/inspect_job.h"

#include <nlohmann/json.hpp>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Inspect, DescribesTheShardedBFloat16Llama) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  const auto info = jobs::inspectModel((sharedDir() / "fixtures/models/tiny-llama").string());
  EXPECT_EQ(info["family"], "Llama");
  EXPECT_EQ(info["kv_heads"], 4);
  EXPECT_EQ(info["positional_scheme"], "RoPE");
  EXPECT_EQ(info["lm_head"], "separate");
  EXPECT_EQ(info["weight_files"].size(), 2u);
  // embed + lm_head + 3 x (2 norms + q,o [64x64] + k,v [32x64] + 3 MLP [172x64]) + final norm
  const int64_t per_layer = 2 * 64 + 2 * 64 * 64 + 2 * 32 * 64 + 3 * 172 * 64;
  EXPECT_EQ(info["parameters"], 2 * 1000 * 64 + 3 * per_layer + 64);
  EXPECT_EQ(info["stored_dtypes"]["BF16"], info["parameters"]);
  // What a layer-major pass holds at a time: one block (every block alike: the first), and
  // the embeddings, head and final norm outside the blocks; bfloat16, 2 bytes each.
  EXPECT_EQ(info["largest_block"]["block"], 0);
  EXPECT_EQ(info["largest_block"]["parameters"], per_layer);
  EXPECT_EQ(info["largest_block"]["bytes"], 2 * per_layer);
  EXPECT_EQ(info["outside_blocks"]["parameters"], 2 * 1000 * 64 + 64);
  EXPECT_NE(jobs::formatInspection(info).find("block 0: " + std::to_string(per_layer) + " parameters"), std::string::npos);
}

TEST(Inspect, TextNamesTheEssentials) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  const auto text = jobs::formatInspection(jobs::inspectModel((sharedDir() / "fixtures/models/tiny-bloom").string()));
  EXPECT_NE(text.find("BLOOM model"), std::string::npos);
  EXPECT_NE(text.find("ALiBi, no fixed maximum"), std::string::npos);
  EXPECT_NE(text.find("6 (6 key/value, head dim 12)"), std::string::npos);
}

// A mixture's experts, and the parameters a token meets: all but half the experts (2 of 4).
TEST(Inspect, AMixtureSaysItsExpertsAndTheParametersATokenMeets) {
  const auto info = jobs::inspectModel(hfFixtureDir("hf-qwen2-moe").string());
  const auto& e = info["experts"];
  EXPECT_EQ(e["experts"], 4);
  EXPECT_EQ(e["per_token"], 2);
  EXPECT_EQ(e["sparse_blocks"], 1);  // block 1 is dense (mlp_only_layers)
  const int64_t experts = 4 * 3 * 32 * 48;
  EXPECT_EQ(e["active_parameters"].get<int64_t>(), info["parameters"].get<int64_t>() - experts / 2);
  EXPECT_NE(jobs::formatInspection(info).find("4 in each of 1 blocks, 2 a token, 32 wide (and a shared expert 56 wide)"),
            std::string::npos)
      << jobs::formatInspection(info);
  EXPECT_FALSE(jobs::inspectModel(hfFixtureDir("hf-qwen2").string()).contains("experts"));
}

// DeepSeek's latent attention: its ranks and each head's parts, and the active parameters
// of blocks 1 and 2 (8 experts, 2 a token; the shared expert always runs).
TEST(Inspect, LatentAttentionSaysItsRanksAndDims) {
  const auto info = jobs::inspectModel(hfFixtureDir("hf-deepseek-v3").string());
  const auto& a = info["latent_attention"];
  EXPECT_EQ(a["q_rank"], 24);
  EXPECT_EQ(a["kv_rank"], 16);
  EXPECT_EQ(a["nope_dims"], 12);
  EXPECT_EQ(a["rope_dims"], 8);
  EXPECT_EQ(a["value_dims"], 10);
  EXPECT_EQ(info["head_dim"], 20);
  const int64_t idle_experts = 2 * 6 * 3 * 24 * 48;  // 2 sparse blocks, 6 of 8 experts idle, 3 maps of 24 x 48
  EXPECT_EQ(info["experts"]["active_parameters"].get<int64_t>(), info["parameters"].get<int64_t>() - idle_experts);
  const auto text = jobs::formatInspection(info);
  EXPECT_NE(text.find("queries through a latent of 24, keys and values through one of 16; each head's key 12 dims from it "
                      "and 8 rotary ones shared by every head, its value 10"),
            std::string::npos)
      << text;
  EXPECT_FALSE(jobs::inspectModel(hfFixtureDir("hf-qwen2").string()).contains("latent_attention"));
}

// A layer count the checkpoint cannot hold is refused before the tensor list is sized
// from it (it used to allocate for minutes).
TEST(Inspect, ALayerCountBeyondTheCheckpointIsBadInput) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto model = copyFixtureModel("tiny-gpt2", s.path());
  auto config = nlohmann::json::parse(readFile(model / "config.json"));
  config["n_layer"] = 1000000000;
  writeFile(model / "config.json", config.dump());
  try {
    jobs::inspectModel(model.string());
    FAIL() << "no error";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("config.json: its 1000000000 layers cannot be in the "), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace posgeom::testing
