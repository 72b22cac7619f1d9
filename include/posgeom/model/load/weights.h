#pragma once
// An architecture's tensors, found in a checkpoint whatever prefix or legacy name
// they carry, checked against the config's shapes, and brought to the compute precision.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

#include <atomic>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "posgeom/io/checkpoint.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/numerics.h"

namespace posgeom::model {

// A zero-copy view of a stored tensor that keeps its file mapped (copied only when
// the storage is misaligned).
at::Tensor tensorFromView(const io::TensorView& view);
at::ScalarType scalarTypeOf(io::DType dtype);

// Where a model's weights live while it runs: all in memory from the start (resident), or
// the blocks' read from the checkpoint when a block runs and let go after (streamed: the
// layer-major pass, for a model larger than the memory it is given).
enum class WeightResidency { kResident, kStreamedBlocks };

// A handle: copies share the tensors and the checkpoint, so that a model streaming its
// blocks keeps what it reads them from.
class Weights {
 public:
  // Validates every spec first: a missing or misshapen tensor is named in an InputError.
  // Resident: every tensor read, checked (NaN, Inf) and brought to the compute precision
  // now. Streamed: the tensors outside the blocks so; a block's when it is asked for.
  Weights(io::Checkpoint checkpoint, const Architecture& arch, const ModelConfig& config, const Numerics& numerics,
          WeightResidency residency = WeightResidency::kResident);

  // Tensors already by canonical name (the trainer's parameters): used as they are, so
  // that gradients reach them.
  explicit Weights(std::map<std::string, at::Tensor> tensors);
  // By canonical name; throws std::logic_error for a name that was not in the specs. A
  // streamed block's tensor is read now, each call, into memory of its own (an InputError
  // for NaN or Inf names it then).
  at::Tensor get(const std::string& name) const;
  bool has(const std::string& name) const;
  bool streamed() const;
  // Bytes of stored tensors read so far (each read counts): what "every weight read once"
  // counts. The counter outlives this handle (a resident model keeps no Weights).
  std::shared_ptr<const std::atomic<int64_t>> readCounter() const { return bytes_read_; }

 private:
  struct State;
  std::shared_ptr<State> state_;
  std::shared_ptr<std::atomic<int64_t>> bytes_read_ = std::make_shared<std::atomic<int64_t>>(0);
};
}  // namespace posgeom::model
