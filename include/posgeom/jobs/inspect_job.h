#pragma once
// `posgeom inspect`: what a model directory holds, without loading its weights.
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::jobs {

// Architecture, sizes, parameter count, stored dtypes, positional scheme, files and
// tokenizer files. Validates the checkpoint against the config as loading would.
nlohmann::json inspectModel(const std::string& model);
std::string formatInspection(const nlohmann::json& info);

}  // namespace posgeom::jobs
