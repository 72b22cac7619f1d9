#include "posgeom/io/dtype.h"

#include <array>
#include <utility>

namespace posgeom::io {
namespace {
struct DTypeInfo {
  DType dtype;
  std::string_view name;
  std::size_t size;
};
constexpr std::array<DTypeInfo, 8> kDTypes{{{DType::kF64, "F64", 8},
                                            {DType::kF32, "F32", 4},
                                            {DType::kF16, "F16", 2},
                                            {DType::kBF16, "BF16", 2},
                                            {DType::kI64, "I64", 8},
                                            {DType::kI32, "I32", 4},
                                            {DType::kU8, "U8", 1},
                                            {DType::kBool, "BOOL", 1}}};

const DTypeInfo& info(DType dtype) { return kDTypes[static_cast<std::size_t>(dtype)]; }
}  // namespace

std::size_t dtypeSize(DType dtype) { return info(dtype).size; }
std::string_view dtypeName(DType dtype) { return info(dtype).name; }

std::optional<DType> parseDType(std::string_view name) {
  for (const auto& d : kDTypes)
    if (d.name == name) return d.dtype;
  return std::nullopt;
}

bool isFloating(DType dtype) {
  return dtype == DType::kF64 || dtype == DType::kF32 || dtype == DType::kF16 || dtype == DType::kBF16;
}

}  // namespace posgeom::io
