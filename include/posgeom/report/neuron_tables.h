#pragma once
// --neurons: block 0's contextual neurons in summary.json (the heads and groups, the top
// neurons), neurons.csv (every neuron) and the report's section.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/heads/contextual_neurons.h"

namespace posgeom::report {

inline constexpr std::size_t kNeuronsInSummary = 20;

// `token_names` by id (tokenize::readTokenNames; "#id" where empty).
nlohmann::json neuronsJson(const heads::NeuronAnalysis& analysis, const std::vector<std::string>& token_names);
// neuron, score, correlation, top_positive, top_negative: the tokens with their
// contributions, "token (value)" joined by " | ", CSV-quoted.
std::string neuronsCsv(const heads::NeuronAnalysis& analysis, const std::vector<std::string>& token_names);
// The report section from summary["neurons"]; empty without it.
std::string neuronsSection(const nlohmann::json& summary);

}  // namespace posgeom::report
