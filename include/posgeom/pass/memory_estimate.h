#pragma once
// What an analysis pass will hold at its peak, estimated from the config before anything
// large is allocated, so that a run that cannot fit stops at once with a batch size that
// does. Torch-free.
#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "posgeom/base/byte_size.h"
#include "posgeom/model/model_config.h"
#include "posgeom/runtime/device.h"

namespace posgeom::pass {

struct PassShape {
  int64_t batch = 8;
  int64_t seq_len = 512;
  int64_t compute_bytes = 4;     // bytes per value of weights and activations
  int64_t layers_kept = 0;       // hidden states accumulated
  int64_t skip_first = 1;
  bool second_moment = true;
  bool heads = false;            // per-block attention sums and samples
  int64_t contexts_cap = 4096;   // context means allocated per layer
  int64_t reservoir = 4;
  int64_t attention_samples = 8;
  int64_t windows = 0;           // at most this many windows (--num-seqs; 0: unknown): the samples' rows
  bool device_memory = false;    // a GPU's pass: the statistics' host parts are not the device's
  bool layer_major = false;      // on a GPU, a layer's sums on the device only while its block runs
  // Layer-major in one wave, each layer handed to its file once its block has run for every
  // window: one layer's statistics being summed and one being written, never all of them.
  bool streamed = false;
  // Cosines between layers (--corpus random, never layer-major): a batch's unit vectors of
  // every accumulated layer held till the batch ends, float32.
  bool layer_cosines = false;
};

struct MemoryEstimate {
  int64_t runtime = 0;      // LibTorch, allocator slack, buffers: a fixed allowance
  int64_t weights = 0;      // every parameter in the compute dtype
  int64_t activations = 0;  // the largest block's temporaries for one batch, and its float64 copies
  int64_t statistics = 0;   // the accumulator's sums and samples, and their copy while saved
  // device_memory: what the host holds besides (the attention samples, float32 on the host
  // always, and the statistics' float64 copy while a state is saved); in the statistics on
  // the CPU, where host and device are one memory. Not in total(), the device's.
  int64_t host = 0;
  int64_t total() const { return runtime + weights + activations + statistics; }
  std::string describe() const;
};

MemoryEstimate estimatePassMemory(const model::ModelConfig& config, int64_t parameters, const PassShape& shape);
// The largest batch (at most shape.batch) whose estimate fits in `limit` bytes; 0 if none.
int64_t largestBatchWithin(const model::ModelConfig& config, int64_t parameters, PassShape shape, int64_t limit);
// The same with the estimate a caller makes of a shape (growing with its batch).
int64_t largestBatchWithin(PassShape shape, int64_t limit, const std::function<MemoryEstimate(const PassShape&)>& estimate);

// Windows per forward pass when none is asked for: enough tokens (2048 on a CPU, 32768 on
// a GPU) for the matrix products to run near the device's rate, no more (memory).
int64_t preferredBatch(const runtime::DeviceSpec& device, int64_t seq_len);

// Bytes the device can give: MemAvailable (and the cgroup's limit) for the CPU, the CUDA
// runtime's free memory for a GPU; nullopt where it cannot be told.
std::optional<int64_t> availableMemory(const runtime::DeviceSpec& device);


}  // namespace posgeom::pass
