#pragma once
// From a model directory to a ready Model: config, architecture, weights.
#include <filesystem>
#include <memory>

#include "posgeom/model/load/weights.h"
#include "posgeom/model/model.h"

namespace posgeom::model {

struct LoadedModel {
  std::unique_ptr<Model> model;
  std::filesystem::path dir;
  // Bytes of the checkpoint read so far: once each at load (resident), and each streamed
  // block's every time it is read.
  std::shared_ptr<const std::atomic<int64_t>> bytes_read;
};

// Throws InputError for every fault in the directory (config, weights, shapes).
LoadedModel loadModel(const std::filesystem::path& dir, const Numerics& numerics,
                      WeightResidency residency = WeightResidency::kResident);

}  // namespace posgeom::model
