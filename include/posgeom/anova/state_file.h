#pragma once
// state.safetensors: everything a report needs, so that runs over shards merge into
// exactly the report of one run (`posgeom merge`). Torch-free.
#include <filesystem>
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
// Throws InputError naming the file when it is not a posgeom state.
AnalysisState loadState(const std::filesystem::path& path);

}  // namespace posgeom::anova
