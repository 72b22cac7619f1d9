#pragma once
// Each architecture's entry, made in its own file; architecture.cpp lists them.
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/model/architecture.h"

namespace posgeom::model {

Architecture bertArchitecture();
Architecture bloomArchitecture();
Architecture cohereArchitecture();
Architecture cohere2Architecture();
Architecture debertaV2Architecture();
Architecture deepseekV2Architecture();
Architecture deepseekV3Architecture();
Architecture falconArchitecture();
Architecture gemmaArchitecture();
Architecture gemma2Architecture();
Architecture gemma3Architecture();
Architecture gemma3MultimodalArchitecture();
Architecture gpt2Architecture();
Architecture gptNeoArchitecture();
Architecture gptNeoXArchitecture();
Architecture gptOssArchitecture();
Architecture gptJArchitecture();
Architecture llamaArchitecture();
Architecture mistralArchitecture();
Architecture mixtralArchitecture();
Architecture modernBertArchitecture();
Architecture mptArchitecture();
Architecture graniteArchitecture();
Architecture olmoArchitecture();
Architecture olmo2Architecture();
Architecture olmo3Architecture();
Architecture olmoeArchitecture();
Architecture optArchitecture();
Architecture phiArchitecture();
Architecture phi3Architecture();
Architecture qwen2Architecture();
Architecture qwen2MoeArchitecture();
Architecture qwen3Architecture();
Architecture qwen3MoeArchitecture();
Architecture robertaArchitecture();
Architecture smollm3Architecture();
Architecture stablelmArchitecture();
Architecture starcoder2Architecture();
Architecture t5Architecture();
Architecture mt5Architecture();

// Config numbers the forward divides by or takes a root of, read with their key named where
// they would make it non-finite (the JSON reader already refuses what overflows a double).
// A positive number: > 0, and not below float32's smallest normal (its inverse overflows):
// soft caps, RoPE bases and factors, query_pre_attn_scalar. `expected` words the refusal.
double positiveNumber(const io::JsonConfig& c, std::initializer_list<const char*> keys, double fallback,
                      const char* expected = "a positive number");
// The same for `value`, found under `key` (a dotted name for nested objects).
double positiveValue(const io::JsonConfig& c, const nlohmann::json& value, const std::string& key,
                     const char* expected = "a positive number");
// A norm's epsilon: >= 0 (a negative one takes the root of a negative variance).
double normEpsilon(const io::JsonConfig& c, std::initializer_list<const char*> keys, double fallback);

// vocab_size and the sizes under the first key of each list the config gives (each required,
// positive); as many key/value heads as heads.
ModelConfig readSizes(const io::JsonConfig& c, std::initializer_list<const char*> hidden = {"hidden_size"},
                      std::initializer_list<const char*> layers = {"num_hidden_layers"},
                      std::initializer_list<const char*> heads = {"num_attention_heads"});
// What readSizes reads, written under the same keys, with the config's "architectures"
// entry, model_type and torch_dtype float32: the start of a family's config.json.
nlohmann::json sizesJson(const ModelConfig& m, const std::string& architecture, const std::string& model_type,
                         const char* hidden = "hidden_size", const char* layers = "num_hidden_layers",
                         const char* heads = "num_attention_heads");
// The activation under `key` (`fallback` when absent), refused unless the forward has it.
std::string readActivation(const io::JsonConfig& c, const char* key, const char* fallback);

// What a family's own models have where a shape leaves it open.
struct ShapeDefaults {
  std::string activation;
  bool tie_word_embeddings = true;
  PositionScheme positions = PositionScheme::kLearned;
  // A mixture family's: its routing, and experts (a shared one too where its
  // shared_expert_size is not 0) as wide as the shape's intermediate size.
  MixtureOfExperts moe{};
};

// The sizes of `shape` (kv heads and MLP width defaulted, ModelShape's checks) with the
// family's defaults.
ModelConfig configForShape(const ModelShape& shape, const ShapeDefaults& defaults);

struct ArchitectureNames {
  std::string model_type, family;
  std::vector<std::string> name_prefixes;
};

// An architecture entry: its names and readers as given, its models made by `build`, with
// the family's shape defaults.
Architecture defineArchitecture(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                                decltype(Architecture::to_config_json) to_config_json,
                                decltype(Architecture::tensors) tensors, decltype(Architecture::build) build,
                                ShapeDefaults defaults, bool supports_dropout = false);

// The same, its models built as ModelClass(config, weights, numerics).
template <typename ModelClass>
Architecture defineArchitecture(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                                decltype(Architecture::to_config_json) to_config_json, decltype(Architecture::tensors) tensors,
                                ShapeDefaults defaults, bool supports_dropout = false) {
  return defineArchitecture(
      std::move(names), std::move(parse_config), std::move(to_config_json), std::move(tensors),
      [](const ModelConfig& c, const Weights& w, const Numerics& n) -> std::unique_ptr<Model> {
        return std::make_unique<ModelClass>(c, w, n);
      },
      std::move(defaults), supports_dropout);
}

}  // namespace posgeom::model
