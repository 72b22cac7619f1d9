#include <gtest/gtest.h>

#include <algorithm>

#include "gpt_style.h"

namespace posgeom::model::gpt_style {
namespace {

ModelConfig smallConfig() {
  ModelConfig m;
  m.vocab_size = 50, m.hidden_size = 8, m.num_layers = 2, m.num_heads = 2, m.num_kv_heads = 2;
  m.intermediate_size = 12, m.max_positions = 16;
  return m;
}

std::vector<std::string> names(const std::vector<TensorSpec>& specs) {
  std::vector<std::string> out;
  for (const auto& s : specs) out.push_back(s.name);
  return out;
}

const TensorSpec& find(const std::vector<TensorSpec>& specs, const std::string& name) {
  const auto it = std::find_if(specs.begin(), specs.end(), [&](const TensorSpec& s) { return s.name == name; });
  if (it == specs.end()) throw std::runtime_error("no tensor " + name);
  return *it;
}

// A block's tensors in the family's module order: random checkpoints draw their values in
// this order, so a reordering would change every small random model.
TEST(GptStyle, TensorsListABlockInItsModulesOrder) {
  auto m = smallConfig();
  m.num_layers = 1;
  m.attention_bias = true;
  auto l = GptLayout()
               .blocks("b.")
               .embeddings("tok", "pos")
               .norms("n1", "n2", "nf")
               .attention(Qkv::kSeparate, {"q", "k", "v"}, "o", Bias::kWithAttentionBias, Bias::kNone)
               .mlp("up", "down");
  EXPECT_EQ(names(tensors(m, l)),
            (std::vector<std::string>{"tok.weight", "pos.weight", "b.0.n1.weight", "b.0.n1.bias", "b.0.q.weight",
                                      "b.0.q.bias", "b.0.k.weight", "b.0.k.bias", "b.0.v.weight", "b.0.v.bias",
                                      "b.0.o.weight", "b.0.n2.weight", "b.0.n2.bias", "b.0.up.weight", "b.0.up.bias",
                                      "b.0.down.weight", "b.0.down.bias", "nf.weight", "nf.bias", "lm_head.weight"}));
  // OPT lists each norm after its sublayer's maps; without attention_bias no map has one.
  l.norms_listed_after = true;
  l.mlp_bias = Bias::kWithAttentionBias;
  m.attention_bias = false;
  EXPECT_EQ(names(tensors(m, l)),
            (std::vector<std::string>{"tok.weight", "pos.weight", "b.0.q.weight", "b.0.k.weight", "b.0.v.weight",
                                      "b.0.o.weight", "b.0.n1.weight", "b.0.n1.bias", "b.0.up.weight",
                                      "b.0.down.weight", "b.0.n2.weight", "b.0.n2.bias", "nf.weight", "nf.bias",
                                      "lm_head.weight"}));
}

TEST(GptStyle, ShapesFollowHowTheMapsAreStored) {
  auto m = smallConfig();
  auto l = GptLayout().blocks("h.").embeddings("wte", "wpe").norms("a", "b", "f").mlp("fc", "proj");
  l.attention(Qkv::kFusedColumns, {"qkv"}, "o");
  l.conv1d = true;  // GPT-2: [in, out]
  auto specs = tensors(m, l);
  EXPECT_EQ(find(specs, "h.1.qkv.weight").shape, (std::vector<int64_t>{8, 24}));
  EXPECT_EQ(find(specs, "h.1.qkv.bias").shape, (std::vector<int64_t>{24}));
  EXPECT_EQ(find(specs, "h.0.fc.weight").shape, (std::vector<int64_t>{8, 12}));
  EXPECT_EQ(find(specs, "wpe.weight").shape, (std::vector<int64_t>{16, 8}));
  l.conv1d = false;
  l.qkv = Qkv::kFusedPerHead;
  specs = tensors(m, l);
  EXPECT_EQ(find(specs, "h.1.qkv.weight").shape, (std::vector<int64_t>{24, 8}));
  EXPECT_EQ(find(specs, "h.0.fc.weight").shape, (std::vector<int64_t>{12, 8}));
  // Only a learned scheme has a position table; OPT's sits two rows further.
  m.positions = PositionScheme::kRope;
  EXPECT_THROW(find(tensors(m, l), "wpe.weight"), std::runtime_error);
  m.positions = PositionScheme::kLearned;
  l.position_offset = 2;
  EXPECT_EQ(find(tensors(m, l), "wpe.weight").shape, (std::vector<int64_t>{18, 8}));
}

TEST(GptStyle, EmbeddingsNarrowerThanTheBlocksAreProjected) {
  auto m = smallConfig();
  m.embedding_width = 4;
  m.post_norm = true;  // no final norm then
  auto l = GptLayout().blocks("h.").embeddings("tok", "pos").norms("a", "b", "final").mlp("fc", "proj");
  l.attention(Qkv::kSeparate, {"q", "k", "v"}, "o");
  l.project_in = "in", l.project_out = "out";
  const auto specs = tensors(m, l);
  EXPECT_EQ(find(specs, "tok.weight").shape, (std::vector<int64_t>{50, 4}));
  EXPECT_EQ(find(specs, "in.weight").shape, (std::vector<int64_t>{8, 4}));
  EXPECT_EQ(find(specs, "out.weight").shape, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(find(specs, "lm_head.weight").shape, (std::vector<int64_t>{50, 4}));
  EXPECT_THROW(find(specs, "final.weight"), std::runtime_error);
}

// GPT-NeoX: either of two heads may be stored (so each is optional); GPT-J's has a bias.
TEST(GptStyle, HeadsAsTheFamilyStoresThem) {
  auto m = smallConfig();
  m.tie_word_embeddings = false;  // tied, a head is never required
  auto l = GptLayout().blocks("h.").embeddings("tok").norms("a", "b", "f").mlp("fc", "proj");
  l.attention(Qkv::kSeparate, {"q", "k", "v"}, "o");
  auto specs = tensors(m, l);
  EXPECT_FALSE(find(specs, "lm_head.weight").optional);
  l.lm_heads = {"embed_out", "lm_head"};
  specs = tensors(m, l);
  EXPECT_TRUE(find(specs, "embed_out.weight").optional);
  EXPECT_TRUE(find(specs, "lm_head.weight").optional);
  EXPECT_THROW(find(specs, "embed_out.bias"), std::runtime_error);
  l.lm_head_bias = true;
  EXPECT_EQ(find(tensors(m, l), "embed_out.bias").use, TensorSpec::Use::kOutput);
}

}  // namespace
}  // namespace posgeom::model::gpt_style
