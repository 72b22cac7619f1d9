// GPT-J: RoPE on the first rotary_dim dims of each head, turning interleaved pairs (2j, 2j + 1)
// (rotate_every_two), one LayerNorm feeding attention and MLP in parallel, bias-free q, k, v
// and output maps, an LM head with a bias.
#include <cmath>

#include "gpt_style.h"

namespace posgeom::model {
namespace {

ModelConfig readGptjConfig(const io::JsonConfig& c) {
  auto m = readSizes(c, {"n_embd"}, {"n_layer"}, {"n_head"});
  const auto& j = c.json();
  m.intermediate_size =
      j.contains("n_inner") && !j["n_inner"].is_null() ? c.requirePositiveInt({"n_inner"}) : 4 * m.hidden_size;
  m.max_positions = c.positiveInt({"n_positions"}, 2048);
  m.norm_eps = normEpsilon(c, {"layer_norm_epsilon"}, 1e-5);
  m.activation = readActivation(c, "activation_function", "gelu_new");
  m.tie_word_embeddings = c.boolean({"tie_word_embeddings"}, false);
  if (m.hidden_size % m.num_heads != 0) c.fail("n_embd is not divisible by n_head");
  // rotary_dim null: the whole head turns. GPT-J's base is fixed at 10000.
  const int64_t rotary =
      j.contains("rotary_dim") && j["rotary_dim"].is_null() ? m.headDim() : c.positiveInt({"rotary_dim"}, 64);
  if (rotary > m.headDim() || rotary % 2 != 0)
    c.fail("rotary_dim must be even and at most the head dim " + std::to_string(m.headDim()));
  m.rope.partial_rotary_factor = static_cast<double>(rotary) / static_cast<double>(m.headDim());
  m.rope.interleaved = true;
  m.parallel_residual = true;
  m.positions = PositionScheme::kRope;
  return m;
}

nlohmann::json gptjConfigJson(const ModelConfig& m) {
  const auto rotary = std::lround(static_cast<double>(m.headDim()) * m.rope.partial_rotary_factor);
  auto j = sizesJson(m, "GPTJForCausalLM", "gptj", "n_embd", "n_layer", "n_head");
  j.update({{"n_inner", m.intermediate_size},   {"n_positions", m.max_positions},
            {"rotary_dim", static_cast<int64_t>(rotary)}, {"layer_norm_epsilon", m.norm_eps},
            {"activation_function", m.activation}, {"tie_word_embeddings", m.tie_word_embeddings}});
  return j;
}

}  // namespace

Architecture gptJArchitecture() {
  using gpt_style::Bias;
  auto l = gpt_style::GptLayout()
               .blocks("h.")
               .embeddings("wte")
               .norms("ln_1", /*mlp: reads ln_1's output too*/ "", "ln_f")
               .attention(gpt_style::Qkv::kSeparate, {"attn.q_proj", "attn.k_proj", "attn.v_proj"}, "attn.out_proj",
                          Bias::kNone, Bias::kNone)
               .mlp("mlp.fc_in", "mlp.fc_out");
  l.lm_head_bias = true;
  auto entry = gpt_style::defineFamily({"gptj", "GPT-J", {"transformer."}}, readGptjConfig, gptjConfigJson, l,
                                       {"gelu_new", false, PositionScheme::kRope});
  entry.layers_key = "n_layer";
  entry.unused_by_design = {"attn.bias", "attn.masked_bias"};  // the causal mask's buffers
  return entry;
}

}  // namespace posgeom::model
