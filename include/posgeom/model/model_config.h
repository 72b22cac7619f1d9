#pragma once
// The hyper-parameters every architecture reduces its config.json to.
#include <cstdint>
#include <filesystem>
#include <string>

namespace posgeom::model {

enum class PositionScheme { kLearned, kAlibi, kRope, kNone };
const char* positionSchemeName(PositionScheme scheme);

struct ModelConfig {
  std::string model_type;
  std::filesystem::path source;  // the config.json it came from
  int64_t vocab_size = 0;
  int64_t hidden_size = 0;
  int64_t num_layers = 0;
  int64_t num_heads = 0;
  int64_t num_kv_heads = 0;  // grouped-query attention; = num_heads otherwise
  int64_t intermediate_size = 0;
  int64_t max_positions = 0;  // 0: no learned limit (ALiBi)
  int64_t type_vocab_size = 0;
  double norm_eps = 1e-5;
  std::string activation;  // gelu, gelu_new, silu, ...
  double rope_theta = 10000.0;
  bool tie_word_embeddings = true;
  bool bidirectional = false;  // BERT; causal for the others
  PositionScheme positions = PositionScheme::kLearned;
  std::string stored_dtype;  // torch_dtype as declared, informational

  int64_t headDim() const { return hidden_size / num_heads; }
};

}  // namespace posgeom::model
