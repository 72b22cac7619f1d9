#pragma once
// Values crossing into Python: JSON as dicts and lists, Eigen matrices as numpy arrays
// (copied: the results own them), and one-line errors for a Python value of the wrong type.
#include <nanobind/nanobind.h>

#include <Eigen/Dense>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

namespace posgeom::python {
namespace nb = nanobind;

nb::object toPython(const nlohmann::json& value);
nb::object numpyOf(const Eigen::MatrixXd& matrix);  // [rows, cols] float64, C order
nb::object numpyOf(const Eigen::VectorXd& vector);  // [n] float64

// The Python type's name, for messages ("str", "Tensor").
std::string typeName(nb::handle value);
// `value` as an integer, a bool, a string (str or os.PathLike): else InputError naming `where`.
int64_t integerArgument(nb::handle value, const std::string& where);
bool boolArgument(nb::handle value, const std::string& where);
std::string textArgument(nb::handle value, const std::string& where);

}  // namespace posgeom::python
