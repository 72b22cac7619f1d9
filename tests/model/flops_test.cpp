#include "posgeom/model/flops.h"

#include "posgeom/model/random_checkpoint.h"
#include "posgeom/model/tensor_specs.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

model::ModelConfig writtenConfig(const model::RandomCheckpointSpec& spec, const ScratchDir& s) {
  const auto dir = s / spec.model_type;
  model::writeRandomCheckpoint(spec, dir);
  return model::loadModelConfig(dir);
}

std::vector<model::TensorSpec> specsOf(const model::ModelConfig& c) {
  return model::architectureFor(c.model_type, "test").tensors(c);
}

TEST(Flops, Gpt2SmallByHand) {
  // Writing 124M random parameters is slow; the config alone is what is counted.
  const auto& arch = model::architectureFor("gpt2", "test");
  model::ModelConfig c;
  c.model_type = "gpt2";
  c.vocab_size = 50257;
  c.hidden_size = 768;
  c.num_layers = 12;
  c.num_heads = c.num_kv_heads = 12;
  c.intermediate_size = 3072;
  c.max_positions = 1024;
  // Per block: c_attn 768 x 2304, attn c_proj 768 x 768, c_fc 768 x 3072, mlp c_proj 3072 x 768.
  const int64_t per_block = 768 * 2304 + 768 * 768 + 768 * 3072 + 3072 * 768;
  EXPECT_EQ(model::productParameters(arch.tensors(c)), 12 * per_block);  // 84,934,656: "85M non-embedding"
  // Causal T = 512: a query sees 256.5 keys on average; q k^T and p v, 2 FLOPs per multiply-add.
  EXPECT_DOUBLE_EQ(model::forwardFlopsPerToken(c, arch.tensors(c), 512, true),
                   2.0 * 12 * per_block + 12 * 4.0 * 768 * 256.5);
  EXPECT_DOUBLE_EQ(model::forwardFlopsPerToken(c, arch.tensors(c), 512, false),
                   2.0 * 12 * per_block + 12 * 4.0 * 768 * 512);
}

// A mixture holds every expert but routes each token to top_k of them: the parameters
// count all, the FLOPs a token's share.
TEST(Flops, AnExpertCountsByTheShareOfTokensRoutedToIt) {
  model::ModelConfig c;
  c.num_layers = 1;
  c.num_heads = 1;
  c.hidden_size = 8;
  model::TensorSpecs s;
  s.weight("attn", {8, 8});
  for (int e = 0; e < 4; ++e) s.expert("expert." + std::to_string(e), {8, 16}, 2.0 / 4.0);  // top 2 of 4
  s.weight("router", {4, 8});
  const auto specs = s.take();
  EXPECT_EQ(model::productParameters(specs), 64 + 4 * 128 + 32);
  EXPECT_DOUBLE_EQ(model::activeProductParameters(specs), 64 + 2 * 128 + 32);
  EXPECT_DOUBLE_EQ(model::forwardFlopsPerToken(c, specs, 1, true), 2.0 * (64 + 2 * 128 + 32) + 4.0 * 8 * 1);
}

// Latent attention: its maps through the latents, the logits over 20 query-key dims a head
// and the weighted sum over 10 value dims (hf-deepseek-v3: 4 heads, latents 24 and 16, 8
// experts of 24 with 2 a token and a shared one, block 0 dense).
TEST(Flops, LatentAttentionCountsItsLatentsAndItsNarrowerValues) {
  const auto c = model::loadModelConfig(hfFixtureDir("hf-deepseek-v3"));
  const double attention_maps = 48 * 24 + 24 * 80 + 48 * 24 + 16 * 88 + 40 * 48;  // q_a, q_b, kv_a, kv_b, o
  const double dense_mlp = 3 * 48 * 80, router = 8 * 48, active_experts = 3 * (2 + 1) * 24 * 48;
  const double active = 3 * attention_maps + dense_mlp + 2 * (router + active_experts);
  EXPECT_DOUBLE_EQ(model::activeProductParameters(specsOf(c)), active);
  EXPECT_DOUBLE_EQ(model::forwardFlopsPerToken(c, specsOf(c), 16, true), 2.0 * active + 3 * 2.0 * 4 * (20 + 10) * 8.5);
}

TEST(Flops, GroupedQueryLlamaCountsItsSmallerKeyAndValueMaps) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.model_type = "llama";
  spec.layers = 2;
  spec.hidden_size = 64;
  spec.heads = 8;
  spec.kv_heads = 2;
  spec.intermediate_size = 96;
  const auto c = writtenConfig(spec, s);
  // q and o: 64 x 64; k and v: 64 x (2 heads x 8); gate, up and down: 64 x 96.
  const int64_t per_block = 2 * 64 * 64 + 2 * 64 * 16 + 3 * 64 * 96;
  EXPECT_EQ(model::productParameters(specsOf(c)), 2 * per_block);
}

TEST(Flops, EmbeddingsAndHeadsAreNotProducts) {
  ScratchDir s;
  for (const char* type : {"gpt2", "bert", "bloom", "llama"}) {
    model::RandomCheckpointSpec spec;
    spec.model_type = type;
    const auto c = writtenConfig(spec, s);
    int64_t tables = 0, outputs = 0;
    for (const auto& t : specsOf(c)) {
      tables += t.use == model::TensorSpec::Use::kLookup;
      outputs += t.use == model::TensorSpec::Use::kOutput;
      if (t.shape.size() == 2 && (t.name.find("embeddings.weight") != std::string::npos ||
                                  t.name == "embed_tokens.weight" || t.name == "wte.weight" || t.name == "wpe.weight")) {
        EXPECT_EQ(t.use, model::TensorSpec::Use::kLookup) << type << " " << t.name;
      }
      if (t.name.find("lm_head") != std::string::npos || t.name.find("cls.") == 0) {
        EXPECT_EQ(t.use, model::TensorSpec::Use::kOutput) << type << " " << t.name;
      }
    }
    EXPECT_GE(tables, 1) << type;
    EXPECT_GE(outputs, 1) << type;
  }
}

}  // namespace
}  // namespace posgeom::testing
