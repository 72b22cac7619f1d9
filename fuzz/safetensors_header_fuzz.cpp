// The safetensors header: 8-byte length, JSON, dtypes, shapes, offsets.
#include "fuzz_target.h"
#include "posgeom/io/safetensors.h"

namespace posgeom::fuzz {

void safetensorsHeader(const uint8_t* data, std::size_t size) {
  const auto header = io::parseSafetensorsHeader(reinterpret_cast<const std::byte*>(data), size, "fuzz");
  // Whatever is accepted must lie inside the image.
  for (const auto& e : header.entries)
    if (e.begin > e.end || header.data_start + e.end > size) __builtin_trap();
}

}  // namespace posgeom::fuzz

POSGEOM_FUZZ_ENTRY(posgeom::fuzz::safetensorsHeader)
