#pragma once
// Element types as safetensors names them.
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

namespace posgeom::io {

enum class DType { kF64, kF32, kF16, kBF16, kI64, kI32, kU8, kBool };

std::size_t dtypeSize(DType dtype);
std::string_view dtypeName(DType dtype);  // "F32", "BF16", ...
std::optional<DType> parseDType(std::string_view name);
bool isFloating(DType dtype);

}  // namespace posgeom::io
