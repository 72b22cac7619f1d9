#include "posgeom/model/load/weights.h"

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/io/mapped_file.h"

#include <atomic>
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

// A copy of a mapped tensor at the same address modulo 64 as the mapping's: the BLAS of
// LibTorch 2.x (MKL) takes another path, and rounds otherwise, for differently aligned
// operands (measured with torch 2.11: 7 in 300 products of a float32 map), so a streamed
// block's copy must sit as the resident model's mapped view does to give the same bits.
at::Tensor copyAlignedAsMapped(const at::Tensor& mapped) {
  constexpr std::uintptr_t kAlignment = 64;  // c10's CPU allocator's
  const auto offset = static_cast<int64_t>(reinterpret_cast<std::uintptr_t>(mapped.data_ptr()) % kAlignment);
  const auto bytes = static_cast<int64_t>(mapped.numel() * static_cast<int64_t>(mapped.element_size()));
  auto buffer = at::empty({bytes + static_cast<int64_t>(kAlignment)}, at::TensorOptions().dtype(at::kByte));
  auto* at_offset = static_cast<std::byte*>(buffer.data_ptr()) + offset;
  std::memcpy(at_offset, mapped.data_ptr(), static_cast<std::size_t>(bytes));
  return at::from_blob(at_offset, mapped.sizes(), [buffer](void*) {}, mapped.options());
}

}  // namespace

struct Weights::State {
  std::shared_ptr<const io::Checkpoint> checkpoint;  // none for tensors given as they are
  Numerics numerics;
  bool streamed = false;
  std::map<std::string, at::Tensor> tensors;         // resident
  std::map<std::string, ResolvedTensor> block_views;  // streamed: read when asked for
  std::shared_ptr<std::atomic<int64_t>> bytes_read;

  at::Tensor read(const ResolvedTensor& t, bool own_memory) {
    const auto& view = *t.view;
    auto tensor = (t.spec.float32 ? tensorFromView(view).to(numerics.device, at::kFloat) : numerics.fit(tensorFromView(view))).contiguous();
    // Same dtype on the CPU: fit keeps the mapping's view, whose pages would stay this
    // process's after the block is let go.
    if (own_memory && tensor.data_ptr() == static_cast<const void*>(view.data)) tensor = copyAlignedAsMapped(tensor);
    // A NaN in the weights would surface layers later as NaN statistics; name it here.
    if (!at::isfinite(tensor).all().item<bool>()) throw nonFiniteWeight(*checkpoint, t, numerics);
    *bytes_read += static_cast<int64_t>(view.nbytes);
    if (own_memory && view.file_mapped) io::dropMappedPages(view.data, view.nbytes);
    return tensor;
  }
};

Weights::Weights(io::Checkpoint checkpoint, const Architecture& arch, const ModelConfig& config, const Numerics& numerics,
                 WeightResidency residency)
    : state_(std::make_shared<State>()) {
  auto& s = *state_;
  s.bytes_read = bytes_read_;
  s.checkpoint = std::make_shared<const io::Checkpoint>(std::move(checkpoint));
  s.numerics = numerics;
  s.streamed = residency == WeightResidency::kStreamedBlocks;
  for (const auto& t : resolveTensors(*s.checkpoint, arch, config)) {
    if (s.streamed && t.spec.block >= 0)
      s.block_views.emplace(t.spec.name, t);
    else
      s.tensors.emplace(t.spec.name, s.read(t, false));
  }
}

Weights::Weights(std::map<std::string, at::Tensor> tensors) : state_(std::make_shared<State>()) {
  state_->tensors = std::move(tensors);
}

at::Tensor Weights::get(const std::string& name) const {
  const auto it = state_->tensors.find(name);
  if (it != state_->tensors.end()) return it->second;
  const auto streamed = state_->block_views.find(name);
  if (streamed != state_->block_views.end()) return state_->read(streamed->second, true);
  throw std::logic_error("weight '" + name + "' was not declared by the architecture");
}

bool Weights::has(const std::string& name) const {
  return state_->tensors.count(name) != 0 || state_->block_views.count(name) != 0;
}

bool Weights::streamed() const { return state_->streamed; }

}  // namespace posgeom::model
