#pragma once
// Saving a state as the CLI's commands do: nothing replaced that posgeom did not write.
#include <filesystem>

#include "posgeom/anova/state_file.h"

namespace posgeom::python {

// A file that exists is replaced only with `overwrite`, and only when it is a posgeom
// state itself; InputError naming the path otherwise.
void saveStateFile(const anova::AnalysisState& state, const std::filesystem::path& path, bool overwrite);

}  // namespace posgeom::python
