#pragma once
// The contextual-neuron analysis of a finished pass: block 0's circuit from the model, the
// sampled windows run through the model again for the real input of its MLP, and
// heads::analyzeNeurons. Torch-free header.
#include <cstdint>
#include <vector>

#include "posgeom/anova/state_layers.h"
#include "posgeom/heads/contextual_neurons.h"

namespace posgeom::pass {

class PassModel;

// Whether the model's family gives its neuron circuit (--neurons is refused otherwise).
bool hasNeuronCircuit(const PassModel& model);

// `heads`: block 0's reports with their kernels; `windows` the sampled windows' ids, in the
// order of the state's samples.
heads::NeuronAnalysis analyzeNeurons(const PassModel& model, const anova::StateLayers& layers,
                                     const std::vector<heads::HeadReport>& heads,
                                     const std::vector<std::vector<int32_t>>& windows, const heads::NeuronOptions& options);

}  // namespace posgeom::pass
