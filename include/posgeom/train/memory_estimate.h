#pragma once
// What `posgeom train` will hold at its peak, estimated from the config before anything is
// allocated, so that a model or batch that cannot fit stops at once (exit 2, naming the
// config's keys) instead of being killed by the kernel or failing in the allocator. Sums
// in long double: the sizes' products may overflow int64. Torch-free.
#include <cstdint>
#include <string>

#include "posgeom/runtime/device.h"
#include "posgeom/train/train_config.h"

namespace posgeom::train {

struct TrainingMemory {
  long double parameters = 0;   // count
  long double state = 0;        // bytes: weights, gradients, Adam moments and the checkpoint's copy of the three
  long double activations = 0;  // bytes: one batch's, kept for the backward pass (with the attention matrices)
  long double attention = 0;    // bytes: of which the [batch, heads, context, context] matrices of every layer
  long double runtime = 0;      // bytes: LibTorch, allocator slack
  long double total() const { return state + activations + runtime; }
};

// float32 training of the GPT-2-architecture model `c` describes, with `vocab` token ids.
TrainingMemory estimateTrainingMemory(const TrainConfig& c, int64_t vocab);

// InputError naming the config file and the keys that decide the size when the estimate
// exceeds what `device` can give (or 2^62 bytes, more than any machine, where that cannot
// be told).
void requireTrainingMemory(const TrainConfig& c, int64_t vocab, const runtime::DeviceSpec& device);

}  // namespace posgeom::train
