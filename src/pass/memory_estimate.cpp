#include "posgeom/pass/memory_estimate.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/runtime/device_timing.h"

namespace posgeom::pass {
namespace {

constexpr int64_t kRuntimeAllowance = int64_t{400} << 20;  // measured RSS of a tiny model's run, rounded up

std::optional<int64_t> readNumber(const std::string& path) {
  std::ifstream in(path);
  std::string text;
  if (!(in >> text) || text == "max") return std::nullopt;
  try {
    return std::stoll(text);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

std::optional<int64_t> memAvailable() {
  std::ifstream in("/proc/meminfo");
  std::string key, unit;
  int64_t kib = 0;
  while (in >> key >> kib >> unit)
    if (key == "MemAvailable:") return kib * 1024;
  return std::nullopt;
}

}  // namespace

MemoryEstimate estimatePassMemory(const model::ModelConfig& c, int64_t parameters, const PassShape& s) {
  MemoryEstimate e;
  e.runtime = kRuntimeAllowance;
  e.weights = parameters * s.compute_bytes;
  const int64_t tokens = s.batch * s.seq_len;
  const int64_t ff = c.intermediate_size > 0 ? c.intermediate_size : 4 * c.hidden_size;
  // One block at a time: residual, normed input, q, k, v, attention output and the
  // projection (7 x d), the MLP's two intermediates (2 x ff), and scores and
  // probabilities of one block of queries [B, H, 128 (ops::kQueryBlock), T]; then the
  // accumulator's float32 product of a hidden state with the previous one.
  const int64_t query_block = std::min<int64_t>(128, s.seq_len);
  e.activations = s.compute_bytes * (tokens * (7 * c.hidden_size + 2 * ff) + 2 * s.batch * c.num_heads * query_block * s.seq_len) +
                  tokens * c.hidden_size * 4;
  const int64_t d = c.hidden_size, positions = s.seq_len - s.skip_first;
  int64_t per_layer = 8 * (positions * d + d * d + s.contexts_cap * d + s.reservoir * positions * d);
  if (s.second_moment) per_layer += 8 * d * d + 4 * d * d;  // and the float32 block product
  if (s.heads) per_layer += 8 * s.seq_len * d + 4 * s.attention_samples * s.seq_len * d;
  // and their host copy while a state is saved during the pass
  e.statistics = 2 * per_layer * s.layers_kept;
  return e;
}

int64_t largestBatchWithin(const model::ModelConfig& config, int64_t parameters, PassShape shape, int64_t limit) {
  int64_t lo = 0, hi = shape.batch;  // lo fits (or is 0), hi is the most asked for
  while (lo < hi) {
    const int64_t mid = lo + (hi - lo + 1) / 2;
    shape.batch = mid;
    if (estimatePassMemory(config, parameters, shape).total() <= limit)
      lo = mid;
    else
      hi = mid - 1;
  }
  return lo;
}

std::string MemoryEstimate::describe() const {
  return formatBytes(total()) + " (weights " + formatBytes(weights) + ", one batch " + formatBytes(activations) +
         ", statistics " + formatBytes(statistics) + ", runtime " + formatBytes(runtime) + ")";
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
  auto available = memAvailable();
  // A container's limit is what counts when it is below the machine's.
  const auto limit = readNumber("/sys/fs/cgroup/memory.max"), used = readNumber("/sys/fs/cgroup/memory.current");
  if (limit && used) {
    const int64_t room = *limit - *used;
    if (!available || room < *available) available = room;
  }
  return available;
}

int64_t parseByteSize(const std::string& text, const std::string& where) {
  std::size_t used = 0;
  double value = 0;
  try {
    value = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  std::string unit = text.substr(used);
  if (!unit.empty() && (unit.back() == 'B' || unit.back() == 'b')) unit.pop_back();
  if (unit.size() == 2 && unit[1] == 'i') unit.pop_back();
  int shift = -1;
  if (unit.empty()) shift = 0;
  else if (unit == "K" || unit == "k") shift = 10;
  else if (unit == "M" || unit == "m") shift = 20;
  else if (unit == "G" || unit == "g") shift = 30;
  else if (unit == "T" || unit == "t") shift = 40;
  if (used == 0 || shift < 0 || !(value > 0) || value * std::ldexp(1.0, shift) > 9e18)
    throw InputError(where, "'" + text + "' is not a size (use bytes or K, M, G, T: 800M, 16G)");
  return static_cast<int64_t>(value * std::ldexp(1.0, shift));
}

std::string formatBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes);
  int unit = 0;
  while (std::abs(value) >= 1024 && unit < 4) {
    value /= 1024;
    ++unit;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), unit == 0 ? "%.0f %s" : "%.1f %s", value, units[unit]);
  return buf;
}

}  // namespace posgeom::pass
