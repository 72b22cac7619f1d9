#pragma once
// An architecture's tensors, found in a checkpoint whatever prefix or legacy name
// they carry, checked against the config's shapes, and brought to the compute precision.
#include "posgeom/base/torch_boundary.h"
#include <ATen/ATen.h>

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

class Weights {
 public:
  // Validates every spec first: a missing or misshapen tensor is named in an InputError.
  Weights(const io::Checkpoint& checkpoint, const Architecture& arch, const ModelConfig& config,
          const Numerics& numerics);

  // Tensors already by canonical name (the trainer's parameters): used as they are, so
  // that gradients reach them.
  explicit Weights(std::map<std::string, at::Tensor> tensors) : tensors_(std::move(tensors)) {}
  // By canonical name; throws std::logic_error for a name that was not in the specs.
  const at::Tensor& get(const std::string& name) const;
  bool has(const std::string& name) const { return tensors_.count(name) != 0; }

 private:
  std::map<std::string, at::Tensor> tensors_;
};

}  // namespace posgeom::model
