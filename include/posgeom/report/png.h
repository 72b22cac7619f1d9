#pragma once
// A minimal PNG encoder (8-bit RGB, no interlace) for heatmaps embedded in the HTML report:
// an image of a 512 x 512 Gram is a few kB where the same as SVG rectangles is megabytes.
#include <cstdint>
#include <string>
#include <vector>

namespace posgeom::report {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> rgb;  // row-major, 3 bytes per pixel
};

std::string encodePng(const RgbImage& image);
std::string base64(const std::string& bytes);

}  // namespace posgeom::report
