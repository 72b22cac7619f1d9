#pragma once
// `analyze --activations`: hidden states made elsewhere (hidden [L,N,T,d] or hidden.<l>
// [N,T,d] in a safetensors file) through the same accumulators as a model's pass.
// Torch-free header.
#include "posgeom/anova/state_file.h"
#include "posgeom/pass/options.h"

namespace posgeom::pass {

anova::AnalysisState analyzeActivations(const AnalyzeOptions& options);

}  // namespace posgeom::pass
