#include "posgeom/pass/memory_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "posgeom/anova/accumulator_options.h"
#include "posgeom/base/error.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/runtime/device_timing.h"

namespace posgeom::pass {

MemoryEstimate estimatePassMemory(const model::ModelConfig& c, int64_t parameters, const PassShape& s) {
  MemoryEstimate e;
  e.runtime = runtime::runtimeAllowanceBytes(
      runtime::DeviceSpec{s.device_memory ? runtime::DeviceSpec::Kind::kCuda : runtime::DeviceSpec::Kind::kCpu, -1});
  e.weights = parameters * s.compute_bytes;
  const int64_t tokens = s.batch * s.seq_len;
  const int64_t ff = c.intermediate_size > 0 ? c.intermediate_size : 4 * c.hidden_size;
  // One block at a time: residual, normed input, q, k, v, attention output and the
  // projection (7 x d), the MLP's two intermediates (2 x ff), and scores and
  // probabilities of one block of queries [B, H, 128 (ops::kQueryBlock), T]; then the
  // accumulator's float32 product of a hidden state with the previous one (and float32
  // copies of both where they are half types), and a second-moment block's d x d product.
  const int64_t query_block = std::min<int64_t>(128, s.seq_len);
  const int64_t d = c.hidden_size, positions = s.seq_len - s.skip_first;
  e.activations = s.compute_bytes * (tokens * (7 * c.hidden_size + 2 * ff) + 2 * s.batch * c.num_heads * query_block * s.seq_len) +
                  tokens * d * 4 * (s.compute_bytes < 4 ? 3 : 1) + (s.second_moment ? 4 * d * d : 0) +
                  // the magnitudes: |h| in float32, and the bins of 2^24 of them at a time (int32, int64)
                  tokens * d * 4 + 12 * std::min<int64_t>(tokens * d, int64_t{1} << 24) +
                  // the cosines between layers: every accumulated layer's unit vectors, and a product
                  (s.layer_cosines ? 4 * s.batch * positions * d * (s.layers_kept + 1) : 0);
  // Per layer, as anova::Accumulator allocates it: float64 position sums, context second
  // moment, context means and reservoir (their rows no more than the windows), the float64
  // second moment and its float32 d x d; with --heads the attention inputs' float64 sum on
  // the device and their float32 samples on the host.
  const auto rows = [&](int64_t cap) { return anova::sampleRows(cap, s.windows); };
  int64_t accumulated = 8 * (positions * d + d * d + rows(s.contexts_cap) * d + rows(s.reservoir) * positions * d);
  // ... and the magnitudes over every position (MagnitudeStatistics): the largest |h| per
  // position and dimension, where each dimension's occurred, the histogram, the skipped
  // positions' sums and the squares.
  accumulated += 8 * (s.seq_len * d + 3 * d + anova::kMagnitudeBins + s.skip_first * d + s.seq_len + 2);
  if (s.second_moment) accumulated += 8 * d * d + 4 * d * d;
  const int64_t samples = s.heads ? 4 * rows(s.attention_samples) * s.seq_len * d : 0;
  if (s.heads) accumulated += 8 * s.seq_len * d;
  // ... and their float64 copy on the host while a state is saved (the float32 d x d not).
  int64_t copy = accumulated - (s.second_moment ? 4 * d * d : 0);
  if (s.heads) copy += 8 * rows(s.attention_samples) * s.seq_len * d;
  const int64_t layers_held = s.streamed ? std::min<int64_t>(2, s.layers_kept) : s.layers_kept;
  if (s.device_memory) {
    // Layer-major, a layer's sums are on the device while its block runs (the float32 block
    // buffer made again there), parked on the host otherwise.
    const int64_t parked = s.layer_major ? accumulated - (s.second_moment ? 4 * d * d : 0) : 0;
    e.statistics = accumulated * (s.layer_major ? std::min<int64_t>(1, s.layers_kept) : s.layers_kept);
    e.host = (samples + copy + parked) * layers_held;
  } else {
    e.statistics = (accumulated + samples + copy) * layers_held;
  }
  return e;
}

int64_t largestBatchWithin(PassShape shape, int64_t limit, const std::function<MemoryEstimate(const PassShape&)>& estimate) {
  int64_t lo = 0, hi = shape.batch;  // lo fits (or is 0), hi is the most asked for
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    shape.batch = mid;
    if (estimate(shape).total() <= limit)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

int64_t largestBatchWithin(const model::ModelConfig& config, int64_t parameters, PassShape shape, int64_t limit) {
  return largestBatchWithin(shape, limit, [&](const PassShape& s) { return estimatePassMemory(config, parameters, s); });
}

std::string MemoryEstimate::describe() const {
  return formatBytes(total()) + " (weights " + formatBytes(weights) + ", one batch " + formatBytes(activations) +
         ", statistics " + formatBytes(statistics) + ", runtime " + formatBytes(runtime) + ")" +
         (host > 0 ? " and " + formatBytes(host) + " of host memory" : "");
}

int64_t preferredBatch(const runtime::DeviceSpec& device, int64_t seq_len) {
  const int64_t tokens = device.isCuda() ? 32768 : 2048;
  return std::max<int64_t>(1, tokens / std::max<int64_t>(1, seq_len));
}

std::optional<int64_t> availableMemory(const runtime::DeviceSpec& device) {
  if (device.isCuda()) {
    const auto memory = runtime::cudaMemory();
    return memory ? std::optional<int64_t>(memory->free) : std::nullopt;
  }
  return availableHostMemory();
}

}  // namespace posgeom::pass
