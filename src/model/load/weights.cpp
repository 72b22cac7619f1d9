#include "posgeom/model/load/weights.h"

#include "posgeom/base/error.h"

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

Weights::Weights(const io::Checkpoint& checkpoint, const Architecture& arch, const ModelConfig& config,
                 const Numerics& numerics) {
  for (const auto& t : resolveTensors(checkpoint, arch, config)) {
    auto tensor = numerics.fit(tensorFromView(*t.view)).contiguous();
    // A NaN in the weights would surface layers later as NaN statistics; name it here.
    if (!at::isfinite(tensor).all().item<bool>())
      throw InputError(checkpoint.fileOf(t.stored_name), "tensor '" + t.stored_name + "' holds NaN or Inf");
    tensors_.emplace(t.spec.name, std::move(tensor));
  }
}

const at::Tensor& Weights::get(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::logic_error("weight '" + name + "' was not declared by the architecture");
  return it->second;
}

}  // namespace posgeom::model
