#include "posgeom/jobs/bench_layer_major.h"

#include <algorithm>

#include "posgeom/base/stopwatch.h"
#include "posgeom/jobs/bench_rounds.h"
#include "posgeom/runtime/device_timing.h"

namespace posgeom::jobs {

LayerMajorRates measureLayerMajor(pass::AnalysisPass& resident, pass::AnalysisPass& layer_major,
                                  std::vector<pass::WindowBatch>& wave, int rounds, const runtime::DeviceSpec& device,
                                  int64_t& next_window) {
  int64_t tokens = 0;
  for (const auto& b : wave) tokens += static_cast<int64_t>(b.ids.size());
  auto time = [&](bool streamed, std::size_t batches) {
    for (auto& b : wave)
      for (auto& w : b.indices) w = next_window++;
    const auto start = SteadyClock::now();
    if (streamed && batches == wave.size()) {
      layer_major.runWave(wave);
    } else if (streamed) {
      layer_major.runWave({wave.begin(), wave.begin() + static_cast<std::ptrdiff_t>(batches)});
    } else {
      for (std::size_t k = 0; k < batches; ++k) resident.run(wave[k]);
    }
    runtime::synchronize(device);
    return secondsSince(start);
  };
  // Warm-up on one batch: kernels chosen, buffers in place, a block read (a wave of 256
  // windows of 512 took 7 minutes a pass on 2 cores, four passes with a whole-wave warm-up).
  time(false, 1), time(true, 1);
  std::vector<double> layer_major_s, ratios;
  for (int i = 0; i < std::max(rounds, 1); ++i) {
    const bool first = i % 2 == 0;  // which goes first alternates
    const double a = time(first, wave.size()), b = time(!first, wave.size());
    const double layer = first ? a : b, resident_s = first ? b : a;
    layer_major_s.push_back(layer);
    ratios.push_back(resident_s / layer);
  }
  return {static_cast<double>(tokens) / median(layer_major_s), median(ratios)};
}

}  // namespace posgeom::jobs
