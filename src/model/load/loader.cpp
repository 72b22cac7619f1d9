#include "posgeom/model/load/loader.h"

#include "posgeom/base/error.h"
#include "posgeom/model/load/checkpoint_source.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/weights.h"

namespace posgeom::model {

LoadedModel loadModel(const std::filesystem::path& dir, const Numerics& numerics, WeightResidency residency) {
  if (!std::filesystem::is_directory(dir)) throw InputError(dir.string(), "model directory does not exist");
  const auto config = loadModelConfig(dir);
  const auto& arch = architectureFor(config.model_type, config.source.string());
  const Weights weights(openCheckpoint(dir), arch, config, numerics, residency);
  return {arch.build(config, weights, numerics), dir, weights.readCounter()};
}

}  // namespace posgeom::model
