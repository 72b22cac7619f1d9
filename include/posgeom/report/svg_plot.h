#pragma once
// The report's figures as inline SVG: heatmaps (a PNG inside, with axes and a colour bar),
// line plots and scatter plots, each with a title, axis labels and tick values. No
// scripts, no external fonts.
#include <Eigen/Dense>
#include <string>
#include <vector>

#include "posgeom/report/colormap.h"

namespace posgeom::report {

struct PlotFrame {
  std::string title;
  std::string x_label;
  std::string y_label;
  int width = 280;
  int height = 230;
};

struct AxisRange {
  double lo = 0;
  double hi = 1;
  bool log = false;  // base-10 ticks; values <= 0 are left out
};
// The range of the finite (and for log, positive) values, padded a little.
AxisRange fitRange(const std::vector<double>& values, bool log = false);

// m's rows run down the y axis, columns along x; `x` and `y` give the index ranges the
// axes are labelled with (e.g. positions 1..T).
std::string heatmapSvg(const Eigen::MatrixXd& m, const ColorScale& scale, const PlotFrame& frame, AxisRange x, AxisRange y,
                       const std::string& value_label, int max_pixels = 128);

struct Series {
  std::string name;  // legend entry; empty: none
  std::vector<double> x, y;
  std::string color = "#2166ac";
  bool markers = false;
};
std::string linePlotSvg(const std::vector<Series>& series, const PlotFrame& frame, AxisRange x, AxisRange y);

struct PointSet {
  std::string name;  // legend entry; empty: none
  std::vector<double> x, y;
  std::vector<std::string> colors;  // one per point, or one for all
  double radius = 2;
  double opacity = 1;
  bool squares = false;  // tiny squares in one path: a cloud of hundreds of points in a few kB
};
// Later sets are drawn over earlier ones. With `color_scale`, a colour bar labelled `value_label`.
std::string scatterSvg(const std::vector<PointSet>& sets, const PlotFrame& frame, AxisRange x, AxisRange y,
                       const ColorScale* color_scale = nullptr, const std::string& value_label = "",
                       AxisRange color_range = {});

// Many small curves on one shared scale, a grid of `columns` mini-panels each labelled
// with its name: y from 0 to the largest value, x from 0 to `x_last` (default: the
// longest curve's last index).
std::string smallMultiplesSvg(const std::string& title, const std::string& x_label, const std::string& y_label,
                              const std::vector<std::vector<double>>& curves, const std::vector<std::string>& names, int columns,
                              double x_last = -1);

std::string escapeXml(const std::string& text);
std::string formatNumber(double v);  // short: 3 significant digits

}  // namespace posgeom::report
