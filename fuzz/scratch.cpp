#include <unistd.h>

#include <fstream>

#include "fuzz_target.h"

namespace posgeom::fuzz {

std::filesystem::path scratchDir() {
  static const std::filesystem::path dir = [] {
    const auto d = std::filesystem::temp_directory_path() / ("posgeom-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(d);
    return d;
  }();
  return dir;
}

void writeBytes(const std::filesystem::path& path, const uint8_t* data, std::size_t size) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
}

}  // namespace posgeom::fuzz
