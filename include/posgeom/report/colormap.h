#pragma once
// Colour for the report's heatmaps: viridis for magnitudes, and for signed data a
// colour-blind-safe blue-white-red diverging map (ColorBrewer RdBu, as in Paul Tol's
// guide) centred at zero.
#include <Eigen/Dense>
#include <cstdint>
#include <string>

#include "posgeom/report/png.h"

namespace posgeom::report {

struct Rgb {
  uint8_t r = 0, g = 0, b = 0;
};
std::string hexColor(const Rgb& c);

enum class ColorMap { kSequential, kDiverging };

// Maps a value to a colour: sequential over [lo, hi]; diverging over [-m, m] with white at 0.
struct ColorScale {
  ColorMap map = ColorMap::kSequential;
  double lo = 0, hi = 1;
  // The scale that covers every finite entry of m (diverging: symmetric about zero).
  static ColorScale fit(const Eigen::MatrixXd& m, ColorMap map);
  double unit(double value) const;  // position in [0, 1]
  Rgb color(double value) const;
};

Rgb colorAt(ColorMap map, double unit);

// The matrix as an image at most `max_side` pixels on each side: larger matrices are
// averaged over blocks of cells. Non-finite cells are grey.
RgbImage heatmapImage(const Eigen::MatrixXd& m, const ColorScale& scale, int max_side);

}  // namespace posgeom::report
