#include "posgeom/model/architecture.h"

#include "arch/architectures.h"
#include "arch/rope_config.h"

#include <cfloat>
#include <cmath>

#include "posgeom/base/error.h"
#include "posgeom/io/checkpoint.h"
#include "posgeom/model/ops.h"

namespace posgeom::model {

// The one list of architectures (alphabetical by model_type).
const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> list = {
      bertArchitecture(),     bloomArchitecture(),     cohereArchitecture(),   cohere2Architecture(),   debertaV2Architecture(), deepseekV2Architecture(), deepseekV3Architecture(), falconArchitecture(),    gemmaArchitecture(),
      gemma2Architecture(),   gemma3MultimodalArchitecture(), gemma3Architecture(),    gpt2Architecture(),      gptNeoArchitecture(),   gptNeoXArchitecture(),   gptOssArchitecture(),
      gptJArchitecture(),     graniteArchitecture(),   llamaArchitecture(),    mistralArchitecture(),
      mixtralArchitecture(),  modernBertArchitecture(), mptArchitecture(),       mt5Architecture(),       olmoArchitecture(),      olmo2Architecture(),      olmo3Architecture(),      olmoeArchitecture(),      optArchitecture(),      phiArchitecture(),
      phi3Architecture(),     qwen2Architecture(),     qwen2MoeArchitecture(), qwen3Architecture(),
      qwen3MoeArchitecture(), robertaArchitecture(),   smollm3Architecture(),  stablelmArchitecture(),
      starcoder2Architecture(), t5Architecture()};
  return list;
}

std::vector<std::string> supportedModelTypes() {
  std::vector<std::string> out;
  for (const auto& a : architectures()) out.push_back(a.model_type);
  return out;
}

const Architecture& architectureFor(const std::string& model_type, const std::string& where) {
  for (const auto& a : architectures())
    if (a.model_type == model_type) return a;
  std::string supported;
  for (const auto& k : supportedModelTypes()) supported += (supported.empty() ? "" : ", ") + k;
  throw InputError(where, "unsupported model_type '" + model_type + "' (supported: " + supported + ")");
}

namespace {

// The alias of `keys` the config gives (for messages), or the first.
std::string givenKey(const io::JsonConfig& c, std::initializer_list<const char*> keys) {
  for (const char* k : keys)
    if (c.has(k)) return k;
  return *keys.begin();
}

// As the config wrote it: a whole number without ".0", else the shortest text that reads back as v.
std::string shortNumber(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return std::to_string(static_cast<int64_t>(v));
  return nlohmann::json(v).dump();
}

}  // namespace

double positiveValue(const io::JsonConfig& c, const nlohmann::json& value, const std::string& key, const char* expected) {
  if (!value.is_number() || !(value.get<double>() > 0) || !std::isfinite(value.get<double>()))
    c.fail(key + " must be " + expected + (value.is_number() ? " (got " + shortNumber(value.get<double>()) + ")" : ""));
  const double v = value.get<double>();
  // The forward runs in float32 at best: 1 / v of a smaller v is infinite there, and v itself 0.
  if (v < FLT_MIN)
    c.fail(key + " is " + shortNumber(v) + ", below float32's smallest normal number 1.2e-38" +
           ": the forward would divide by it and overflow");
  return v;
}

double positiveNumber(const io::JsonConfig& c, std::initializer_list<const char*> keys, double fallback,
                      const char* expected) {
  const auto key = givenKey(c, keys);
  return c.has(key.c_str()) ? positiveValue(c, c.json()[key], key, expected) : fallback;
}

double normEpsilon(const io::JsonConfig& c, std::initializer_list<const char*> keys, double fallback) {
  const auto key = givenKey(c, keys);
  const double eps = c.number({key.c_str()}, fallback);
  if (!(eps >= 0) || !std::isfinite(eps))
    c.fail(key + " must be a number >= 0 (got " + shortNumber(eps) + "): the norm takes the root of the variance plus it");
  return eps;
}

ModelConfig readSizes(const io::JsonConfig& c, std::initializer_list<const char*> hidden,
                      std::initializer_list<const char*> layers, std::initializer_list<const char*> heads) {
  ModelConfig m;
  m.vocab_size = c.requirePositiveInt({"vocab_size"});
  m.hidden_size = c.requirePositiveInt(hidden);
  m.num_layers = c.requirePositiveInt(layers);
  m.num_heads = c.requirePositiveInt(heads);
  m.num_kv_heads = m.num_heads;
  return m;
}

nlohmann::json sizesJson(const ModelConfig& m, const std::string& architecture, const std::string& model_type,
                         const char* hidden, const char* layers, const char* heads) {
  return {{"architectures", {architecture}}, {"model_type", model_type}, {"vocab_size", m.vocab_size},
          {hidden, m.hidden_size},           {layers, m.num_layers},     {heads, m.num_heads},
          {"torch_dtype", "float32"}};
}

std::string readActivation(const io::JsonConfig& c, const char* key, const char* fallback) {
  auto activation = c.string({key}, fallback);
  if (!ops::isKnownActivation(activation)) c.fail(std::string("unsupported ") + key + " '" + activation + "'");
  return activation;
}

ModelConfig configForShape(const ModelShape& shape, const ShapeDefaults& defaults) {
  if (shape.layers <= 0 || shape.hidden_size <= 0 || shape.heads <= 0 || shape.vocab_size <= 0 || shape.max_positions <= 0)
    throw InputError("random-model", "sizes must be positive");
  if (shape.hidden_size % shape.heads != 0) throw InputError("random-model", "hidden size must be divisible by heads");
  ModelConfig config;
  config.vocab_size = shape.vocab_size;
  config.hidden_size = shape.hidden_size;
  config.num_layers = shape.layers;
  config.num_heads = shape.heads;
  config.num_kv_heads = shape.kv_heads > 0 ? shape.kv_heads : shape.heads;
  config.intermediate_size = shape.intermediate_size > 0 ? shape.intermediate_size : 4 * shape.hidden_size;
  config.max_positions = shape.max_positions;
  config.type_vocab_size = 2;
  config.norm_eps = 1e-5;
  if (config.num_heads % config.num_kv_heads != 0) throw InputError("random-model", "heads must be a multiple of kv heads");
  config.activation = defaults.activation;
  config.tie_word_embeddings = defaults.tie_word_embeddings;
  config.positions = defaults.positions;
  config.moe = defaults.moe;
  if (config.moe.experts > 0) {
    config.moe.expert_size = config.intermediate_size;
    if (config.moe.shared_expert_size != 0) config.moe.shared_expert_size = config.intermediate_size;
  }
  return config;
}

Architecture defineArchitecture(ArchitectureNames names, decltype(Architecture::parse_config) parse_config,
                                decltype(Architecture::to_config_json) to_config_json,
                                decltype(Architecture::tensors) tensors, decltype(Architecture::build) build,
                                ShapeDefaults defaults, bool supports_dropout) {
  Architecture entry;
  entry.model_type = std::move(names.model_type);
  entry.family = std::move(names.family);
  entry.name_prefixes = std::move(names.name_prefixes);
  entry.parse_config = std::move(parse_config);
  entry.to_config_json = std::move(to_config_json);
  entry.tensors = std::move(tensors);
  entry.build = std::move(build);
  entry.config_for_shape = [defaults = std::move(defaults)](const ModelShape& shape) { return configForShape(shape, defaults); };
  entry.supports_dropout = supports_dropout;
  return entry;
}

ModelConfig loadModelConfig(const std::filesystem::path& model_dir) {
  const auto path = model_dir / "config.json";
  if (!std::filesystem::exists(path)) throw InputError(path.string(), "missing config.json in the model directory");
  const auto config = io::JsonConfig::load(path);
  if (!config.has("model_type")) config.fail("missing key 'model_type'");
  const auto type = config.string({"model_type"}, "");
  ModelConfig parsed;
  try {
    parsed = architectureFor(type, path.string()).parse_config(config);
    requireLongropeFactorsFit(config, parsed);
  } catch (const nlohmann::json::exception& e) {
    config.fail("a value of the wrong kind: " + io::jsonErrorMessage(e));
  }
  parsed.model_type = type;
  parsed.source = path;
  parsed.stored_dtype = config.string({"torch_dtype"}, "");
  if (parsed.head_dim == 0 && parsed.hidden_size % parsed.num_heads != 0)
    config.fail("hidden size " + std::to_string(parsed.hidden_size) + " is not divisible by the " +
                std::to_string(parsed.num_heads) + " attention heads");
  if (parsed.num_heads % parsed.num_kv_heads != 0)
    config.fail("the " + std::to_string(parsed.num_heads) + " attention heads are not a multiple of the " +
                std::to_string(parsed.num_kv_heads) + " key/value heads");
  // Before anything is sized from the config (the tensor list, the memory estimate): every
  // layer has tensors of its own, so a config with more layers than the checkpoint holds
  // tensors is not its config ("n_layer": 1e9 used to allocate for minutes).
  // Likewise the experts of a mixture.
  if (const auto tensors = io::countCheckpointTensors(model_dir)) {
    if (parsed.num_layers > *tensors)
      config.fail("its " + std::to_string(parsed.num_layers) + " layers cannot be in the " + std::to_string(*tensors) +
                  " tensors of the checkpoint beside it (each layer has tensors of its own)");
    if (parsed.moe.experts > *tensors)
      config.fail("its " + std::to_string(parsed.moe.experts) + " experts a block cannot be in the " +
                  std::to_string(*tensors) + " tensors of the checkpoint beside it (each expert has tensors of its own)");
  }
  return parsed;
}

}  // namespace posgeom::model
