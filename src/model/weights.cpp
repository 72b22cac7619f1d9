#include "posgeom/model/weights.h"

#include <cstring>

#include "posgeom/model/tensor_resolver.h"

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
    tensors_.emplace(t.spec.name, numerics.fit(tensorFromView(*t.view)).contiguous());
  }
}

const at::Tensor& Weights::get(const std::string& name) const {
  const auto it = tensors_.find(name);
  if (it == tensors_.end()) throw std::logic_error("weight '" + name + "' was not declared by the architecture");
  return it->second;
}

}  // namespace posgeom::model
