#pragma once
// One entry per architecture, each made by its own file in src/model/arch/ and listed
// once in architecture.cpp: adding a family is adding a file and a line. Everything that
// differs between families is asked of this entry (or of the Model it builds). Torch-free.
#include <cstdint>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/io/json_file.h"
#include "posgeom/model/model_config.h"

namespace posgeom::model {

class Model;
class Weights;
struct Numerics;

// A tensor the architecture expects, under its canonical (unprefixed) name.
struct TensorSpec {
  enum class Init { kNormal, kOnes, kZeros };
  // kProduct: multiplies every token's activations in the pass to the hidden states;
  // kLookup: an embedding table; kOutput: after the last hidden state (LM heads).
  enum class Use { kProduct, kLookup, kOutput };
  std::string name;
  std::vector<int64_t> shape;
  Init init = Init::kNormal;
  bool optional = false;  // e.g. an untied LM head, BERT's MLM head
  Use use = Use::kProduct;
  // An LM head that tie_word_embeddings makes the token embedding: not loaded even when stored.
  bool tied = false;
  // The share of tokens a kProduct tensor multiplies: 1, or for an expert of a mixture its
  // router's top_k / experts. Every expert is held in memory; FLOPs count the active ones.
  double active_share = 1.0;
  // The block (0-based) whose forward step reads it; -1: outside the blocks (embeddings,
  // the final norm, the head). A layer-major pass needs block b's tensors only for block b.
  int64_t block = -1;
  // Held in float32 whatever the compute dtype, as transformers' _keep_in_fp32_modules does
  // (DeepSeek-V3's e_score_correction_bias: its rounding would move close expert choices).
  bool float32 = false;

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    return n;
  }
};

// The sizes a random checkpoint or a training run asks for; the architecture fills in
// the rest of its config (activation, tied embeddings, norms) as its real models have it.
struct ModelShape {
  int64_t layers = 0;
  int64_t hidden_size = 0;
  int64_t heads = 0;
  int64_t kv_heads = 0;           // 0: = heads
  int64_t intermediate_size = 0;  // 0: 4 x hidden_size
  int64_t vocab_size = 0;
  int64_t max_positions = 0;
};

struct Architecture {
  std::string model_type;  // config.json's "model_type"
  std::string family;      // human name: "GPT-2", ...
  // Prefixes that real checkpoints put before the canonical names ("transformer.").
  std::vector<std::string> name_prefixes;
  std::function<ModelConfig(const io::JsonConfig&)> parse_config;
  std::function<nlohmann::json(const ModelConfig&)> to_config_json;
  std::function<std::vector<TensorSpec>(const ModelConfig&)> tensors;
  std::function<std::unique_ptr<Model>(const ModelConfig&, const Weights&, const Numerics&)> build;
  // The family's config for the given sizes: random checkpoints and training start here.
  std::function<ModelConfig(const ModelShape&)> config_for_shape;
  // Whether ForwardRequest::dropout is applied (training); others refuse a dropout.
  bool supports_dropout = false;
  // config.json's key for the number of blocks, for messages.
  std::string layers_key = "num_hidden_layers";
  // Stored tensors the model does not need and transformers loads without a word: buffers
  // (causal masks, rotary inv_freq) and heads it does not compute (BERT's pooler). Each is a
  // whole name or a dotted suffix of one, or with a trailing dot a module (T5's "decoder.") whose
  // every tensor is left out; other tensors the model does not use get a warning.
  std::vector<std::string> unused_by_design;
};

// Every architecture, in the order `inspect` and error messages list them.
const std::vector<Architecture>& architectures();
// Throws InputError naming `where` and listing the supported model types.
const Architecture& architectureFor(const std::string& model_type, const std::string& where);
std::vector<std::string> supportedModelTypes();

// Reads <dir>/config.json and parses it with its architecture.
ModelConfig loadModelConfig(const std::filesystem::path& model_dir);

}  // namespace posgeom::model
