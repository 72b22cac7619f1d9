#pragma once
// state.safetensors: everything a report needs, so that runs over shards merge into
// exactly the report of one run (`posgeom merge`). Torch-free.
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <vector>

#include "posgeom/anova/layer_statistics.h"

namespace posgeom::anova {

struct AnalysisState {
  // The run's identity and settings; what must agree for states to merge or resume is
  // anova::settingsDifference's (state_merge.h).
  nlohmann::json settings = nlohmann::json::object();
  int64_t windows = 0;  // windows accumulated
  std::vector<LayerStatistics> layers;
};

void saveState(const AnalysisState& state, const std::filesystem::path& path);
// The same file, byte for byte, where some layers were saved one at a time as each became
// final (a one-wave layer-major pass): `layer_files` each hold one layer (saveState of a
// state with that layer alone). The layers are listed by index, state.layers' and the
// files' together; a file's tensors are copied one at a time, so the layers are never all
// in memory.
void saveState(const AnalysisState& state, const std::vector<std::filesystem::path>& layer_files,
               const std::filesystem::path& path);
// Throws InputError naming the file when it is not a posgeom state.
AnalysisState loadState(const std::filesystem::path& path);

// A state file read a layer at a time: what the end stages of a run whose statistics
// never were all in memory read. Each layer is copied out of the file's mapping, whose
// pages are then let go.
// What the end stages ask of a layer before they read it.
struct LayerShape {
  int64_t layer = 0;
  int64_t positions = 0, dim = 0;
  bool second_moment = false;
  bool attention_inputs = false;  // --heads: its block's attention inputs
};
LayerShape shapeOf(const LayerStatistics& layer);

class StateReader {
 public:
  // Throws InputError naming the file when it is not a posgeom state.
  explicit StateReader(const std::filesystem::path& path);
  ~StateReader();
  const nlohmann::json& settings() const;
  int64_t windows() const;
  std::size_t layerCount() const;
  LayerShape layerShape(std::size_t i) const;  // without reading it
  LayerStatistics layer(std::size_t i) const;  // safe to call from several threads

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace posgeom::anova
