#include "posgeom/report/colormap.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace posgeom::report {
namespace {

constexpr Rgb kViridis[] = {{0x44, 0x01, 0x54}, {0x47, 0x2c, 0x7a}, {0x3b, 0x51, 0x8b}, {0x2c, 0x71, 0x8e}, {0x21, 0x90, 0x8d},
                            {0x27, 0xad, 0x81}, {0x5c, 0xc8, 0x63}, {0xaa, 0xdc, 0x32}, {0xfd, 0xe7, 0x25}};
constexpr Rgb kBlueRed[] = {{0x21, 0x66, 0xac}, {0x43, 0x93, 0xc3}, {0x92, 0xc5, 0xde}, {0xd1, 0xe5, 0xf0}, {0xf7, 0xf7, 0xf7},
                            {0xfd, 0xdb, 0xc7}, {0xf4, 0xa5, 0x82}, {0xd6, 0x60, 0x4d}, {0xb2, 0x18, 0x2b}};

Rgb interpolate(const Rgb (&anchors)[9], double unit) {
  const double x = std::clamp(unit, 0.0, 1.0) * 8.0;
  const int i = std::min(7, static_cast<int>(x));
  const double f = x - i;
  auto mix = [f](uint8_t a, uint8_t b) { return static_cast<uint8_t>(std::lround(a + f * (b - a))); };
  return {mix(anchors[i].r, anchors[i + 1].r), mix(anchors[i].g, anchors[i + 1].g), mix(anchors[i].b, anchors[i + 1].b)};
}

}  // namespace

std::string hexColor(const Rgb& c) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "#%02x%02x%02x", c.r, c.g, c.b);
  return buf;
}

Rgb colorAt(ColorMap map, double unit) { return interpolate(map == ColorMap::kSequential ? kViridis : kBlueRed, unit); }

ColorScale ColorScale::fit(const Eigen::MatrixXd& m, ColorMap map) {
  double lo = INFINITY, hi = -INFINITY;
  for (Eigen::Index i = 0; i < m.size(); ++i)
    if (std::isfinite(m.data()[i])) lo = std::min(lo, m.data()[i]), hi = std::max(hi, m.data()[i]);
  if (!std::isfinite(lo)) lo = 0, hi = 1;
  if (map == ColorMap::kDiverging) {
    const double bound = std::max({std::abs(lo), std::abs(hi), 1e-300});
    return {map, -bound, bound};
  }
  if (hi <= lo) hi = lo + 1;
  return {map, lo, hi};
}

double ColorScale::unit(double value) const { return std::clamp((value - lo) / (hi - lo), 0.0, 1.0); }

Rgb ColorScale::color(double value) const { return std::isfinite(value) ? colorAt(map, unit(value)) : Rgb{0x99, 0x99, 0x99}; }

RgbImage heatmapImage(const Eigen::MatrixXd& m, const ColorScale& scale, int max_side) {
  RgbImage image;
  image.height = static_cast<int>(std::min<Eigen::Index>(m.rows(), max_side));
  image.width = static_cast<int>(std::min<Eigen::Index>(m.cols(), max_side));
  if (image.height == 0 || image.width == 0) return {};
  image.rgb.resize(static_cast<std::size_t>(image.width) * static_cast<std::size_t>(image.height) * 3);
  for (int y = 0; y < image.height; ++y) {
    const Eigen::Index r0 = y * m.rows() / image.height, r1 = (y + 1) * m.rows() / image.height;
    for (int x = 0; x < image.width; ++x) {
      const Eigen::Index c0 = x * m.cols() / image.width, c1 = (x + 1) * m.cols() / image.width;
      const double mean = m.block(r0, c0, r1 - r0, c1 - c0).mean();
      const Rgb c = scale.color(mean);
      uint8_t* px = &image.rgb[(static_cast<std::size_t>(y) * static_cast<std::size_t>(image.width) + static_cast<std::size_t>(x)) * 3];
      px[0] = c.r, px[1] = c.g, px[2] = c.b;
    }
  }
  return image;
}

}  // namespace posgeom::report
