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
  const std::string kind = code == Code::Int       ? "int" + std::to_string(type.bits)
                           : code == Code::UInt    ? "uint" + std::to_string(type.bits)
                           : code == Code::Bool    ? "bool"
                           : code == Code::Complex ? "complex"
                                                   : std::to_string(type.bits) + "-bit float";
  throw InputError(what, "holds " + kind + " values: hidden states must be float32, float64, float16 or bfloat16");
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
  if (!nb::try_cast(value, view.array)) {
    if (nb::hasattr(value, "__dlpack__"))
      throw InputError(what, "is a " + typeName(value) + " that DLPack cannot hand over (sparse, on the meta device, or of a dtype "
                                                           "it lacks): give a dense floating-point array on the CPU or a GPU");
    throw InputError(what, "is a " + typeName(value) + ": give a torch tensor or a numpy array (anything with __dlpack__)");
  }
  const auto& a = view.array;
  std::vector<int64_t> sizes(a.ndim()), strides(a.ndim()), reversed;
  const auto type = scalarTypeOf(a.dtype(), what);
  auto* first = static_cast<char*>(const_cast<void*>(a.data()));
  for (std::size_t i = 0; i < a.ndim(); ++i) {
    sizes[i] = static_cast<int64_t>(a.shape(i));
    strides[i] = static_cast<int64_t>(a.stride(i));
    // A reversed view (numpy.flip): read from its lowest address forward, then flipped back.
    if (strides[i] < 0 && sizes[i] > 1) {
      first += strides[i] * (sizes[i] - 1) * static_cast<int64_t>(at::elementSize(type));
      strides[i] = -strides[i];
      reversed.push_back(static_cast<int64_t>(i));
    }
  }
  const auto options = at::TensorOptions().dtype(type).device(deviceOf(a, what));
  view.tensor = at::from_blob(first, sizes, strides, options);
  if (!reversed.empty()) view.tensor = view.tensor.flip(reversed);  // the one case that copies
  return view;
}

}  // namespace posgeom::python
