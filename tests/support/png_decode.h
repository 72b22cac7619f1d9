#pragma once
// A small PNG reader for tests (8-bit RGB or RGBA, every filter type): checks posgeom's
// encoder and reads Chromium's screenshots. Throws std::runtime_error on anything else.
#include <cstdint>
#include <string>
#include <vector>

namespace posgeom::testing {

struct DecodedPng {
  int width = 0;
  int height = 0;
  int channels = 0;  // 3 or 4
  std::vector<uint8_t> pixels;
  const uint8_t* at(int x, int y) const { return &pixels[(static_cast<std::size_t>(y) * width + x) * channels]; }
};

DecodedPng decodePng(const std::string& bytes);
std::string base64Decode(const std::string& text);

}  // namespace posgeom::testing
