#include "posgeom/model/load/weights.h"

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"

#include <cstring>

#include "posgeom/model/load/tensor_resolver.h"

namespace posgeom::model {

at::ScalarType scalarTypeOf(io::DType dtype) {
  switch (dtype) {
    case io::DType::kF64: return at::kDouble;
    case io::DType::kF32: return at::kFloat;
    case io::DType::kF16: return at::kHalf;
    case io::DType::kBF16: return at::kBFloat16;
    case io::DType::kI64: return at::kLong;
    case io::DType::kI32: return at::kInt;
    case io::DType::kU8: return at::kByte;
    case io::DType::kBool: return at::kBool;
  }
  throw std::logic_error("unknown dtype");
}

at::Tensor tensorFromView(const io::TensorView& view) {
  const auto type = scalarTypeOf(view.dtype);
  const auto address = reinterpret_cast<std::uintptr_t>(view.data);
  auto* data = const_cast<std::byte*>(view.data);  // read-only mapping: never written through
  if (view.nbytes == 0) return at::empty(view.shape, at::TensorOptions().dtype(type));
  if (address % io::dtypeSize(view.dtype) != 0) {
    auto t = at::empty(view.shape, at::TensorOptions().dtype(type));
    std::memcpy(t.data_ptr(), view.data, view.nbytes);
    return t;
  }
  // The tensor holds the mapping alive for as long as any model uses it.
  return at::from_blob(data, view.shape, [owner = view.owner](void*) {}, at::TensorOptions().dtype(type));
}

namespace {

const char* precisionName(at::ScalarType t) {
  switch (t) {
    case at::kHalf: return "float16";
    case at::kBFloat16: return "bfloat16";
    case at::kDouble: return "float64";
    default: return "float32";
  }
}

// A stored value that is finite but not in the compute precision (an F64 1e300 in float32)
// is no NaN in the file: say that it overflows.
InputError nonFiniteWeight(const io::Checkpoint& checkpoint, const ResolvedTensor& t, const Numerics& numerics) {
  const auto file = checkpoint.fileOf(t.stored_name);
  const auto stored = tensorFromView(*t.view);
  if (!at::isfinite(stored).all().item<bool>()) return InputError(file, "tensor '" + t.stored_name + "' holds NaN or Inf");
  return InputError(file, "tensor '" + t.stored_name + "' holds " + log::number("%g", stored.abs().max().item<double>()) +
                              ", beyond the range of " + precisionName(numerics.rounding) +
                              ", the precision the model is computed in (--dtype)");
}

}  // namespace

Weights::Weights(const io::Checkpoint& checkpoint, const Architecture& arch, const ModelConfig& config,
                 const Numerics& numerics) {
  for (const auto& t : resolveTensors(checkpoint, arch, config)) {
    auto tensor = numerics.fit(tensorFromView(*t.view)).contiguous();
    // A NaN in the weights would surface layers later as NaN statistics; name it here.
    if (!at::isfinite(tensor).all().item<bool>()) throw nonFiniteWeight(checkpoint, t, numerics);
    tensors_.emplace(t.spec.name, std::move(tensor));
  }
}

const at::Tensor& Weights::get(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::logic_error("weight '" + name + "' was not declared by the architecture");
  return it->second;
}

}  // namespace posgeom::model
