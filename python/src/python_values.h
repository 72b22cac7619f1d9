#pragma once
// Values crossing into Python: JSON as dicts and lists, Eigen matrices as numpy arrays
// (copied: the results own them), and one-line errors for a Python value of the wrong type.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include <Eigen/Dense>
#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::python {
namespace nb = nanobind;

nb::object toPython(const nlohmann::json& value);
nb::object numpyOf(const Eigen::MatrixXd& matrix);  // [rows, cols] float64, C order
nb::object numpyOf(const Eigen::VectorXd& vector);  // [n] float64
// `count` values converted to Out, as a numpy array of `shape` that owns its copy.
template <typename Out, typename In>
nb::object ownedArray(const In* values, std::size_t count, std::initializer_list<std::size_t> shape) {
  auto* data = new Out[count > 0 ? count : 1];
  for (std::size_t i = 0; i < count; ++i) data[i] = static_cast<Out>(values[i]);
  nb::capsule owner(data, [](void* p) noexcept { delete[] static_cast<Out*>(p); });
  return nb::ndarray<nb::numpy, Out>(data, shape, owner).cast();
}

// The Python type's name, for messages ("str", "Tensor").
std::string typeName(nb::handle value);
// `value` as an integer, a bool, a string (str or os.PathLike): else InputError naming `where`.
int64_t integerArgument(nb::handle value, const std::string& where);
bool boolArgument(nb::handle value, const std::string& where);
std::string textArgument(nb::handle value, const std::string& where);

}  // namespace posgeom::python
