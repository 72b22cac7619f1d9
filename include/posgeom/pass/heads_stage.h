#pragma once
// The heads analysis of a finished pass: each selected block's mean and sampled attention
// inputs from the state, with the model's query/key maps, ALiBi slopes and RoPE. Shared
// by `analyze --heads`, `merge --model` and the benchmark. Torch-free header.
#include <nlohmann/json.hpp>
#include <vector>

#include "posgeom/anova/state_layers.h"
#include "posgeom/heads/head_analysis.h"

namespace posgeom::pass {

// What a state's settings record of the heads options, so that a merge reproduces them.
nlohmann::json headSettingsJson(const heads::HeadOptions& options, int64_t samples);
heads::HeadOptions headOptionsFromSettings(const nlohmann::json& settings, const heads::HeadOptions& report_defaults);

class PassModel;

// Every head of every block whose state holds attention inputs; `causal` as the pass ran.
// The layers are read one at a time.
std::vector<heads::HeadReport> analyzeHeads(const PassModel& model, const anova::StateLayers& layers,
                                            const heads::HeadOptions& options, bool causal);

}  // namespace posgeom::pass
