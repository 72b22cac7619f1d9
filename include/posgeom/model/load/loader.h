#pragma once
// From a model directory to a ready Model: config, architecture, weights.
#include <filesystem>
#include <memory>

#include "posgeom/model/model.h"

namespace posgeom::model {

struct LoadedModel {
  std::unique_ptr<Model> model;
  std::filesystem::path dir;
};

// Throws InputError for every fault in the directory (config, weights, shapes).
LoadedModel loadModel(const std::filesystem::path& dir, const Numerics& numerics);

}  // namespace posgeom::model
