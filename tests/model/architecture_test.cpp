#include "posgeom/model/architecture.h"

#include <algorithm>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

void writeConfig(const fs::path& dir, const std::string& json) {
  fs::create_directories(dir);
  writeFile(dir / "config.json", json);
}

std::string errorOf(const fs::path& dir) {
  try {
    model::loadModelConfig(dir);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(Architecture, AllFourFamiliesRegisterThemselves) {
  const auto types = model::supportedModelTypes();
  for (const char* t : {"bert", "bloom", "gpt2", "llama"})
    EXPECT_NE(std::find(types.begin(), types.end(), t), types.end()) << t;
}

TEST(Architecture, UnknownModelTypeListsTheSupportedOnes) {
  ScratchDir s;
  writeConfig(s.path(), R"({"model_type": "mamba"})");
  const auto msg = errorOf(s.path());
  EXPECT_NE(msg.find("config.json"), std::string::npos);
  EXPECT_NE(msg.find("unsupported model_type 'mamba'"), std::string::npos);
  EXPECT_NE(msg.find("bert, bloom, cohere, cohere2, deberta-v2, deepseek_v2, deepseek_v3, falcon, gemma, gemma2, gemma3, gemma3_text, gpt2, gpt_neo, gpt_neox, gpt_oss, gptj, granite, llama, mistral, mixtral, modernbert, mpt, mt5, olmo, olmo2, olmo3, olmoe, opt, phi, phi3, qwen2, qwen2_moe, qwen3, qwen3_moe, roberta, smollm3, stablelm, starcoder2, t5"), std::string::npos);
}

TEST(Architecture, MissingKeyIsNamedWithItsAliases) {
  ScratchDir s;
  writeConfig(s.path(), R"({"model_type": "gpt2", "vocab_size": 10, "n_layer": 2, "n_head": 2, "n_positions": 8})");
  EXPECT_NE(errorOf(s.path()).find("missing key 'n_embd' or 'hidden_size'"), std::string::npos);
}

TEST(Architecture, MissingModelTypeIsAnError) {
  ScratchDir s;
  writeConfig(s.path(), R"({"vocab_size": 10})");
  EXPECT_NE(errorOf(s.path()).find("missing key 'model_type'"), std::string::npos);
}

TEST(Architecture, ContradictoryHeadCountsAreRejected) {
  ScratchDir s;
  writeConfig(s.path(), R"({"model_type": "gpt2", "vocab_size": 10, "n_embd": 10, "n_layer": 2, "n_head": 3, "n_positions": 8})");
  EXPECT_NE(errorOf(s.path()).find("not divisible"), std::string::npos);
  writeConfig(s.path(), R"({"model_type": "llama", "vocab_size": 10, "hidden_size": 16, "num_hidden_layers": 1,
      "num_attention_heads": 4, "num_key_value_heads": 3, "intermediate_size": 8})");
  EXPECT_NE(errorOf(s.path()).find("not a multiple"), std::string::npos);
}

TEST(Architecture, Gpt2DefaultsFollowHuggingFace) {
  ScratchDir s;
  writeConfig(s.path(), R"({"model_type": "gpt2", "vocab_size": 50257, "n_embd": 768, "n_layer": 12, "n_head": 12,
      "n_positions": 1024, "n_inner": null})");
  const auto c = model::loadModelConfig(s.path());
  EXPECT_EQ(c.intermediate_size, 4 * 768);
  EXPECT_EQ(c.activation, "gelu_new");
  EXPECT_TRUE(c.tie_word_embeddings);
  EXPECT_FALSE(c.bidirectional);
}

TEST(Architecture, LlamaTwoConfigWithGroupedQueryAttention) {
  ScratchDir s;
  writeConfig(s.path(), R"({"model_type": "llama", "vocab_size": 32000, "hidden_size": 8192, "num_hidden_layers": 80,
      "num_attention_heads": 64, "num_key_value_heads": 8, "intermediate_size": 28672, "rms_norm_eps": 1e-5,
      "rope_theta": 10000.0, "max_position_embeddings": 4096, "tie_word_embeddings": false, "rope_scaling": null})");
  const auto c = model::loadModelConfig(s.path());
  EXPECT_EQ(c.num_kv_heads, 8);
  EXPECT_EQ(c.headDim(), 128);
  EXPECT_DOUBLE_EQ(c.norm_eps, 1e-5);
  EXPECT_EQ(c.positions, model::PositionScheme::kRope);
}

TEST(Architecture, WrongTypeForKeyIsNamed) {
  ScratchDir s;
  writeConfig(s.path(), R"({"model_type": "bert", "vocab_size": "many"})");
  EXPECT_NE(errorOf(s.path()).find("'vocab_size' must be a positive integer"), std::string::npos);
}

// A norm's epsilon is added to a variance before its root: a negative one makes NaN hidden
// states. Every family refuses it under its own key, in config.json, before the forward.
TEST(Architecture, ANegativeNormEpsilonIsRefusedByItsKeyInEveryFamily) {
  for (const auto& [fixture, key] : std::vector<std::pair<std::string, std::string>>{
           {"hf-llama", "rms_norm_eps"},        {"hf-gemma2", "rms_norm_eps"},     {"hf-gpt-neox", "layer_norm_eps"},
           {"hf-gpt-neo", "layer_norm_epsilon"}, {"hf-gptj", "layer_norm_epsilon"}, {"hf-gpt2", "layer_norm_epsilon"},
           {"hf-bloom", "layer_norm_epsilon"},  {"hf-bert", "layer_norm_eps"},    {"hf-roberta", "layer_norm_eps"}}) {
    ScratchDir s;
    const auto dir = editedHfFixture(s.path(), fixture, [key = key](nlohmann::json& c) { c[key] = -1; });
    EXPECT_NE(errorOf(dir).find("config.json: " + key + " must be a number >= 0 (got -1)"), std::string::npos)
        << fixture << ": " << errorOf(dir);
    ScratchDir zero;  // 0 is what the norms' definitions allow
    EXPECT_EQ(errorOf(editedHfFixture(zero.path(), fixture, [key = key](nlohmann::json& c) { c[key] = 0; })), "") << fixture;
  }
}

// Every family tags each tensor with the block that reads it (what a layer-major pass
// loads for that block): block b's names are block 0's with b in place of 0, every block
// as large, and what lies outside the blocks (embeddings, final norm, head) in none.
class BlockTensorsPerArch : public ::testing::TestWithParam<std::string> {};

TEST_P(BlockTensorsPerArch, EachBlockHasTheSameTensorsUnderItsOwnIndex) {
  const auto& arch = model::architectureFor(GetParam(), "test");
  model::ModelShape shape;
  shape.layers = 3, shape.hidden_size = 32, shape.heads = 4, shape.vocab_size = 100, shape.max_positions = 32;
  const auto config = arch.config_for_shape(shape);
  const auto specs = arch.tensors(config);
  std::vector<std::vector<std::string>> names(3);
  std::vector<int64_t> sizes(3, 0);
  int64_t outside = 0;
  for (const auto& t : specs) {
    ASSERT_LT(t.block, 3) << t.name;
    ASSERT_GE(t.block, -1) << t.name;
    if (t.block < 0) {
      ++outside;
      // A table every block looks up is stored under block 0's name (T5's relative bias).
      if (t.use != model::TensorSpec::Use::kLookup) {
        for (const char* index : {".0.", ".1.", ".2."}) EXPECT_EQ(t.name.find(index), std::string::npos) << t.name;
      }
      continue;
    }
    const auto index = "." + std::to_string(t.block) + ".";
    auto generic = t.name;
    const auto at = generic.find(index);
    ASSERT_NE(at, std::string::npos) << t.name << " is tagged block " << t.block;
    generic.replace(at, index.size(), ".#.");
    names[static_cast<std::size_t>(t.block)].push_back(generic);
    sizes[static_cast<std::size_t>(t.block)] += t.numel();
  }
  EXPECT_GT(outside, 0);
  EXPECT_FALSE(names[0].empty());
  EXPECT_EQ(names[2], names[1]);
  EXPECT_EQ(sizes[2], sizes[1]);
  // Block 0 as the others, or (ModernBERT, whose block 0 reads the normed embedding as it is)
  // without its attention norm alone; or (DeepSeek's first_k_dense_replace) with a dense MLP
  // where the others have their experts.
  auto first = names[1], zeroth = names[0];
  if (zeroth != first) first.erase(std::remove(first.begin(), first.end(), "layers.#.attn_norm.weight"), first.end());
  if (!config.moe.sparse(0) && config.moe.sparse(1)) {
    auto outsideMlp = [](std::vector<std::string>& v) {
      v.erase(std::remove_if(v.begin(), v.end(), [](const std::string& n) { return n.find(".mlp.") != std::string::npos; }), v.end());
    };
    outsideMlp(first), outsideMlp(zeroth);
    EXPECT_NE(std::find(names[0].begin(), names[0].end(), "layers.#.mlp.gate_proj.weight"), names[0].end());
  }
  EXPECT_EQ(zeroth, first);
}

INSTANTIATE_TEST_SUITE_P(Archs, BlockTensorsPerArch, ::testing::ValuesIn(model::supportedModelTypes()));

}  // namespace
}  // namespace posgeom::testing
