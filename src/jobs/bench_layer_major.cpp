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
  auto time = [&](bool streamed) {
    for (auto& b : wave)
      for (auto& w : b.indices) w = next_window++;
    const auto start = SteadyClock::now();
    if (streamed) {
      layer_major.runWave(wave);
    } else {
      for (const auto& b : wave) resident.run(b);
    }
    runtime::synchronize(device);
    return secondsSince(start);
  };
  time(false), time(true);  // warm-up: kernels chosen, buffers in place
  std::vector<double> layer_major_s, ratios;
  for (int i = 0; i < std::max(rounds, 1); ++i) {
    const bool first = i % 2 == 0;  // which goes first alternates
    const double a = time(first), b = time(!first);
    const double layer = first ? a : b, resident_s = first ? b : a;
    layer_major_s.push_back(layer);
    ratios.push_back(resident_s / layer);
  }
  return {static_cast<double>(tokens) / median(layer_major_s), median(ratios)};
}

}  // namespace posgeom::jobs
