#pragma once
// One entry per architecture; each architecture's file registers itself, so a new
// architecture is a new file and nothing else changes. Torch-free on purpose.
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

  int64_t numel() const {
    int64_t n = 1;
    for (int64_t v : shape) n *= v;
    return n;
  }
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
};

// Called from a static initializer in each architecture's file.
bool registerArchitecture(Architecture arch);
// Throws InputError naming `where` and listing the supported model types.
const Architecture& architectureFor(const std::string& model_type, const std::string& where);
std::vector<std::string> supportedModelTypes();

// Reads <dir>/config.json and parses it with its architecture.
ModelConfig loadModelConfig(const std::filesystem::path& model_dir);

}  // namespace posgeom::model
