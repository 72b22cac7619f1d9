#pragma once
// `posgeom inspect`: what a model directory holds, without loading its weights.
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::jobs {

// Architecture, sizes, parameter count, stored dtypes, positional scheme, files and
// tokenizer files. Validates the checkpoint against the config as loading would.
// `revision`: of a hub name, as analyze's --revision (empty: main).
nlohmann::json inspectModel(const std::string& model, const std::string& revision = "");
std::string formatInspection(const nlohmann::json& info);

}  // namespace posgeom::jobs
