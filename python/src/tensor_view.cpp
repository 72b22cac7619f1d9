#include "tensor_view.h"

#include <vector>

#include "posgeom/base/error.h"
#include "python_values.h"

namespace posgeom::python {
namespace {

at::ScalarType scalarTypeOf(const nb::dlpack::dtype& type, const std::string& what) {
  using Code = nb::dlpack::dtype_code;
  const auto code = static_cast<Code>(type.code);
  if (type.lanes == 1) {
    if (code == Code::Float && type.bits == 32) return at::kFloat;
    if (code == Code::Float && type.bits == 64) return at::kDouble;
    if (code == Code::Float && type.bits == 16) return at::kHalf;
    if (code == Code::Bfloat && type.bits == 16) return at::kBFloat16;
  }
  const char* kind = code == Code::Int ? "int" : code == Code::UInt ? "uint" : code == Code::Bool ? "bool" : "a non-float ";
  throw InputError(what, "holds " + std::string(kind) + std::to_string(type.bits) +
                             " values: hidden states must be floating point (float32, float64, float16 or bfloat16)");
}

at::Device deviceOf(const nb::ndarray<nb::ro>& array, const std::string& what) {
  const auto type = array.device_type();
  if (type == nb::device::cpu::value) return at::kCPU;
  if (type == nb::device::cuda::value)
    return at::Device(at::kCUDA, static_cast<c10::DeviceIndex>(array.device_id()));
  throw InputError(what, "is on a device posgeom does not read (DLPack device type " + std::to_string(type) +
                             "): give a CPU or CUDA tensor");
}

}  // namespace

TensorView tensorView(nb::handle value, const std::string& what) {
  if (nb::hasattr(value, "requires_grad") && nb::isinstance<nb::bool_>(value.attr("requires_grad")) &&
      nb::cast<bool>(value.attr("requires_grad")))
    throw InputError(what, "requires grad: pass tensor.detach() (posgeom reads hidden states; it does not differentiate them)");
  TensorView view;
  if (!nb::try_cast(value, view.array))
    throw InputError(what, "is a " + typeName(value) + ": give a torch tensor or a numpy array (anything with __dlpack__)");
  const auto& a = view.array;
  std::vector<int64_t> sizes(a.ndim()), strides(a.ndim());
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    sizes[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = static_cast<int64_t>(a.stride(i));
  }
  const auto options = at::TensorOptions().dtype(scalarTypeOf(a.dtype(), what)).device(deviceOf(a, what));
  view.tensor = at::from_blob(const_cast<void*>(a.data()), sizes, strides, options);
  return view;
}

}  // namespace posgeom::python
