#pragma once
// A sweep model's series of checkpoints (train --save-every's step_<n> directories): the
// step a checkpoint's name ends with, and the checkpoints a pattern names, in step order.
// Torch-free header.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace posgeom::jobs {

// The step a checkpoint's directory name ends with: step_1200, checkpoint-500 (none for
// "step", "1200" or "step_").
std::optional<int64_t> checkpointStep(const std::string& name);

// Whether a model's `model` names a series by a pattern (it holds *, ? or [).
bool isCheckpointPattern(const std::string& model);

// The directories that the pattern's last component matches, in step order (those without
// a step last, by name); matching files are left out, with a warning that names them.
// Throws InputError at `where` when another component holds a pattern.
std::vector<std::filesystem::path> matchingCheckpoints(const std::filesystem::path& pattern, const std::string& where);

// Refuses (InputError at `where`) two checkpoints of one step, step_010 and step_10: the
// tables and the series page tell a series' checkpoints apart by their step.
void requireOneCheckpointAStep(const std::vector<std::filesystem::path>& checkpoints, const std::string& where);

}  // namespace posgeom::jobs
