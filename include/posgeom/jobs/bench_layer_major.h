#pragma once
// `posgeom bench --layer-major`: the layer-major pass against the resident one on the same
// windows, in one process (issue 33's measure). Torch-free header.
#include <cstdint>
#include <vector>

#include "posgeom/pass/analysis_pass.h"
#include "posgeom/runtime/device.h"

namespace posgeom::jobs {

struct LayerMajorRates {
  double tokens_per_s = 0;  // layer-major: the wave's tokens over the median of its seconds
  // Layer-major tokens/s over resident tokens/s on the same batches: the median of the
  // rounds' ratios (each round runs both back to back, which goes first alternating), so
  // that a machine's drift between rounds does not enter it.
  double vs_resident = 0;
};

// `wave`'s batches through `resident` one by one and through `layer_major` (a pass over the
// same model streaming its blocks: each block's weights read once a wave) as one wave,
// `rounds` times (at least one) after a warm-up of each; `next_window` numbers the windows.
LayerMajorRates measureLayerMajor(pass::AnalysisPass& resident, pass::AnalysisPass& layer_major,
                                  std::vector<pass::WindowBatch>& wave, int rounds, const runtime::DeviceSpec& device,
                                  int64_t& next_window);

}  // namespace posgeom::jobs
