#include "posgeom/model/architecture.h"

#include <map>

#include "posgeom/base/error.h"

namespace posgeom::model {
namespace {
std::map<std::string, Architecture>& registry() {
  static std::map<std::string, Architecture> r;
  return r;
}
}  // namespace

bool registerArchitecture(Architecture arch) {
  const std::string key = arch.model_type;
  return registry().emplace(key, std::move(arch)).second;
}

std::vector<std::string> supportedModelTypes() {
  std::vector<std::string> out;
  for (const auto& [k, v] : registry()) out.push_back(k);
  return out;
}

const Architecture& architectureFor(const std::string& model_type, const std::string& where) {
  const auto it = registry().find(model_type);
  if (it != registry().end()) return it->second;
  std::string supported;
  for (const auto& k : supportedModelTypes()) supported += (supported.empty() ? "" : ", ") + k;
  throw InputError(where, "unsupported model_type '" + model_type + "' (supported: " + supported + ")");
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
  } catch (const nlohmann::json::exception& e) {
    config.fail("a value of the wrong kind: " + io::jsonErrorMessage(e));
  }
  parsed.model_type = type;
  parsed.source = path;
  parsed.stored_dtype = config.string({"torch_dtype"}, "");
  if (parsed.hidden_size % parsed.num_heads != 0)
    config.fail("hidden size " + std::to_string(parsed.hidden_size) + " is not divisible by the " +
                std::to_string(parsed.num_heads) + " attention heads");
  if (parsed.num_heads % parsed.num_kv_heads != 0)
    config.fail("the " + std::to_string(parsed.num_heads) + " attention heads are not a multiple of the " +
                std::to_string(parsed.num_kv_heads) + " key/value heads");
  return parsed;
}

}  // namespace posgeom::model
