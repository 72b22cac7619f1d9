#include "python_values.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>

#include "posgeom/base/error.h"

namespace posgeom::python {

nb::object toPython(const nlohmann::json& value) {
  using T = nlohmann::json::value_t;
  switch (value.type()) {
    case T::null:
    case T::discarded: return nb::none();
    case T::boolean: return nb::bool_(value.get<bool>());
    case T::number_integer: return nb::int_(value.get<int64_t>());
    case T::number_unsigned: return nb::int_(value.get<uint64_t>());
    case T::number_float: return nb::float_(value.get<double>());
    case T::string: return nb::str(value.get_ref<const std::string&>().c_str());
    case T::binary: return nb::bytes(reinterpret_cast<const char*>(value.get_binary().data()), value.get_binary().size());
    case T::array: {
      nb::list list;
      for (const auto& item : value) list.append(toPython(item));
      return list;
    }
    case T::object: {
      nb::dict dict;
      for (const auto& [key, item] : value.items()) dict[nb::str(key.c_str())] = toPython(item);
      return dict;
    }
  }
  return nb::none();
}


nb::object numpyOf(const Eigen::MatrixXd& matrix) {
  const Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor> rows = matrix;
  return ownedArray<double>(rows.data(), static_cast<std::size_t>(rows.size()),
                    {static_cast<std::size_t>(rows.rows()), static_cast<std::size_t>(rows.cols())});
}

nb::object numpyOf(const Eigen::VectorXd& vector) {
  return ownedArray<double>(vector.data(), static_cast<std::size_t>(vector.size()), {static_cast<std::size_t>(vector.size())});
}

std::string typeName(nb::handle value) { return nb::cast<std::string>(nb::handle(value.type()).attr("__name__")); }

int64_t integerArgument(nb::handle value, const std::string& where) {
  if (nb::isinstance<nb::bool_>(value) || !nb::isinstance<nb::int_>(value))
    throw InputError(where, "must be an integer, not " + typeName(value));
  int64_t out = 0;
  if (!nb::try_cast(value, out)) throw InputError(where, "is too large (" + nb::cast<std::string>(nb::str(value)) + ")");
  return out;
}

bool boolArgument(nb::handle value, const std::string& where) {
  if (!nb::isinstance<nb::bool_>(value)) throw InputError(where, "must be True or False, not " + typeName(value));
  return nb::cast<bool>(value);
}

std::string textArgument(nb::handle value, const std::string& where) {
  if (nb::isinstance<nb::str>(value)) return nb::cast<std::string>(value);
  if (nb::hasattr(value, "__fspath__")) {
    nb::object path = value.attr("__fspath__")();
    if (nb::isinstance<nb::str>(path)) return nb::cast<std::string>(path);
  }
  throw InputError(where, "must be a string or a path, not " + typeName(value));
}

}  // namespace posgeom::python
