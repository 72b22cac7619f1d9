#pragma once
// Synthetic inputs for the report's figures: layer metrics from random sequences and
// head reports with made-up kernels, at any scale (up to Llama-2-7B's 33 x 32 heads).
#include <nlohmann/json.hpp>
#include <vector>

#include "posgeom/heads/head_analysis.h"
#include "posgeom/metrics/layer_metrics.h"

namespace posgeom::testing {

std::vector<metrics::LayerMetrics> sampleLayers(int layers, int positions, int dim);
// Heads of blocks 0..layers-2 (writing hidden states 1..layers-1) with `per_layer` heads
// each; `qk_heads` of them keep QK maps.
std::vector<heads::HeadReport> sampleHeads(int layers, int per_layer, int positions, int qk_heads);
// Makes them rotary: `pairs` turning pairs (a band each, up to 8) and `unturned_dims` more,
// each head's kernel all in band head % bands (its kernel_mass named after the half it is in (an odd count's
// middle band: spread)),
// its attention spread evenly over the bands, or NaN shares with `sampled` false.
void addRopeBands(std::vector<heads::HeadReport>& heads, int pairs, int unturned_dims, bool sampled = true);
// What summaryJson makes of them.
nlohmann::json sampleSummary(const std::vector<metrics::LayerMetrics>& layers, const std::vector<heads::HeadReport>& heads);

}  // namespace posgeom::testing
