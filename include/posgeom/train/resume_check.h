#pragma once
// Whether a training checkpoint continues the run a config describes: the same config (but
// for how long it runs and where it saves), the same corpus contents, a schedule not yet
// passed and the same threads. Torch-free header.
#include <cstdint>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "posgeom/train/train_config.h"

namespace posgeom::train {

// The corpus by every byte of its text, as train reads it; "" for the addition task.
std::string corpusDigest(const DataSpec& data);
// The first key of two configs that differs, as "optim.learning_rate (saved 0.001, now
// 0.002)"; "" when they agree.
std::string configDifference(const nlohmann::json& saved, const nlohmann::json& now);
// The checkpoint's step, or InputError naming what does not continue; a warning where a
// resume is allowed but not bit-for-bit the run it continues.
int64_t checkResumable(const TrainConfig& config, const std::filesystem::path& checkpoint, const std::string& corpus_digest);

}  // namespace posgeom::train
