#include "posgeom/model/load/tensor_resolver.h"

#include "posgeom/base/error.h"

namespace posgeom::model {

std::vector<std::string> candidateNames(const std::string& canonical, const std::vector<std::string>& prefixes) {
  std::vector<std::string> bases{canonical};
  auto legacy = [&](const std::string& suffix, const std::string& old) {
    if (canonical.size() > suffix.size() && canonical.compare(canonical.size() - suffix.size(), suffix.size(), suffix) == 0)
      bases.push_back(canonical.substr(0, canonical.size() - suffix.size()) + old);
  };
  legacy("LayerNorm.weight", "LayerNorm.gamma");
  legacy("LayerNorm.bias", "LayerNorm.beta");
  std::vector<std::string> out;
  for (const auto& b : bases) {
    out.push_back(b);
    for (const auto& p : prefixes) out.push_back(p + b);
  }
  return out;
}

std::vector<ResolvedTensor> resolveTensors(const io::Checkpoint& checkpoint, const Architecture& arch,
                                           const ModelConfig& config) {
  std::vector<ResolvedTensor> out;
  for (auto& spec : arch.tensors(config)) {
    const io::TensorView* view = nullptr;
    std::string found;
    for (const auto& name : candidateNames(spec.name, arch.name_prefixes)) {
      if ((view = checkpoint.find(name))) {
        found = name;
        break;
      }
    }
    if (!view) {
      if (spec.optional) continue;
      throw InputError(checkpoint.dir().string(), "missing tensor '" + spec.name + "' (a " + arch.family +
                                                      " checkpoint needs it; also looked for it with prefixes and legacy names)");
    }
    const std::string file = checkpoint.fileOf(found);
    if (view->shape != spec.shape)
      throw InputError(file, "tensor '" + found + "' has shape " + io::shapeToString(view->shape) + " but " +
                                 config.source.string() + " implies " + io::shapeToString(spec.shape));
    if (!io::isFloating(view->dtype))
      throw InputError(file, "tensor '" + found + "' is " + std::string(io::dtypeName(view->dtype)) +
                                 ", expected a floating-point dtype");
    out.push_back({std::move(spec), found, view});
  }
  return out;
}

}  // namespace posgeom::model
