#include "posgeom/report/svg_plot.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "posgeom/report/png.h"

namespace posgeom::report {
namespace {

// Plot area inside the frame: room for the title, tick labels, axis labels, colour bar.
struct Layout {
  double left = 46, top = 24, right, bottom;
  Layout(const PlotFrame& f, bool colour_bar) : right(f.width - (colour_bar ? 58 : 10)), bottom(f.height - 36) {}
  double width() const { return right - left; }
  double height() const { return bottom - top; }
};

double toUnit(double v, const AxisRange& r) {
  if (r.log) return (std::log10(v) - std::log10(r.lo)) / (std::log10(r.hi) - std::log10(r.lo));
  return (v - r.lo) / (r.hi - r.lo);
}

// A tick label with as many decimals as the tick spacing needs.
std::string tickLabel(double v, double step, bool log) {
  if (log || !(step > 0) || std::abs(v) >= 1e5 || (std::abs(v) < 1e-3 && v != 0)) return formatNumber(v);
  const int decimals = std::clamp(static_cast<int>(std::ceil(-std::log10(step) - 1e-9)), 0, 6);
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

double tickStep(const std::vector<double>& t) { return t.size() > 1 ? t[1] - t[0] : 0; }

// About four "nice" ticks (1, 2, 5 times a power of ten), or powers of ten on a log axis.
std::vector<double> ticks(const AxisRange& r) {
  std::vector<double> out;
  if (r.log) {
    const int a = static_cast<int>(std::ceil(std::log10(r.lo) - 1e-9)), b = static_cast<int>(std::floor(std::log10(r.hi) + 1e-9));
    const int step = std::max(1, (b - a + 1) / 5 + ((b - a + 1) % 5 ? 1 : 0));
    for (int e = a; e <= b; e += step) out.push_back(std::pow(10.0, e));
    return out;
  }
  const double span = r.hi - r.lo;
  if (!(span > 0)) return {r.lo};
  const double raw = span / 4, magnitude = std::pow(10.0, std::floor(std::log10(raw)));
  double step = magnitude;
  for (double m : {1.0, 2.0, 5.0, 10.0})
    if (m * magnitude >= raw) {
      step = m * magnitude;
      break;
    }
  for (double v = std::ceil(r.lo / step - 1e-9) * step; v <= r.hi + 1e-9 * span; v += step) out.push_back(std::abs(v) < 1e-12 * span ? 0 : v);
  return out;
}

class Svg {
 public:
  Svg(const PlotFrame& frame, bool colour_bar) : frame_(frame), layout_(frame, colour_bar) {
    out_ << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" << frame.width << "\" height=\"" << frame.height
         << "\" viewBox=\"0 0 " << frame.width << " " << frame.height << "\" role=\"img\" aria-label=\"" << escapeXml(frame.title)
         << "\"><title>" << escapeXml(frame.title) << "</title>";
    text(frame.width / 2.0, 14, frame.title, "middle", "title");
  }
  const Layout& layout() const { return layout_; }
  double px(double v, const AxisRange& r) const { return layout_.left + toUnit(v, r) * layout_.width(); }
  double py(double v, const AxisRange& r) const { return layout_.bottom - toUnit(v, r) * layout_.height(); }
  // Matrices: row 0 at the top.
  double pyDown(double v, const AxisRange& r) const { return layout_.top + toUnit(v, r) * layout_.height(); }

  void text(double x, double y, const std::string& s, const char* anchor, const char* cls, double rotate = 0) {
    out_ << "<text x=\"" << fmt(x) << "\" y=\"" << fmt(y) << "\" text-anchor=\"" << anchor << "\" class=\"" << cls << "\"";
    if (rotate != 0) out_ << " transform=\"rotate(" << rotate << " " << fmt(x) << " " << fmt(y) << ")\"";
    out_ << ">" << escapeXml(s) << "</text>";
  }
  void axes(const AxisRange& x, const AxisRange& y, bool y_down = false) {
    const auto& l = layout_;
    out_ << "<rect x=\"" << fmt(l.left) << "\" y=\"" << fmt(l.top) << "\" width=\"" << fmt(l.width()) << "\" height=\""
         << fmt(l.height()) << "\" class=\"frame\"/>";
    const auto x_ticks = ticks(x), y_ticks = ticks(y);
    for (double t : x_ticks) {
      const double p = px(t, x);
      out_ << "<line x1=\"" << fmt(p) << "\" x2=\"" << fmt(p) << "\" y1=\"" << fmt(l.bottom) << "\" y2=\"" << fmt(l.bottom + 4)
           << "\" class=\"tick\"/>";
      text(p, l.bottom + 14, tickLabel(t, tickStep(x_ticks), x.log), "middle", "tick");
    }
    for (double t : y_ticks) {
      const double p = y_down ? pyDown(t, y) : py(t, y);
      out_ << "<line x1=\"" << fmt(l.left - 4) << "\" x2=\"" << fmt(l.left) << "\" y1=\"" << fmt(p) << "\" y2=\"" << fmt(p)
           << "\" class=\"tick\"/>";
      text(l.left - 6, p + 3, tickLabel(t, tickStep(y_ticks), y.log), "end", "tick");
    }
    text(l.left + l.width() / 2, frame_.height - 6, frame_.x_label, "middle", "label");
    text(11, l.top + l.height() / 2, frame_.y_label, "middle", "label", -90);
  }
  void colourBar(const ColorScale& scale, const std::string& label, AxisRange range) {
    const auto& l = layout_;
    const double x = l.right + 10, w = 10;
    static std::atomic<int> gradients{0};  // ids unique across the page
    const std::string id = "colourbar" + std::to_string(gradients++);
    out_ << "<defs><linearGradient id=\"" << id << "\" x1=\"0\" y1=\"1\" x2=\"0\" y2=\"0\">";
    for (int i = 0; i <= 8; ++i) out_ << "<stop offset=\"" << i / 8.0 << "\" stop-color=\"" << hexColor(colorAt(scale.map, i / 8.0)) << "\"/>";
    out_ << "</linearGradient></defs><rect x=\"" << fmt(x) << "\" y=\"" << fmt(l.top) << "\" width=\"" << w << "\" height=\""
         << fmt(l.height()) << "\" fill=\"url(#" << id << ")\" class=\"colourbar\"/>";
    if (range.hi <= range.lo) range = {scale.lo, scale.hi, false};
    const auto bar_ticks = ticks(range);
    for (double t : bar_ticks) {
      const double p = l.bottom - (t - range.lo) / (range.hi - range.lo) * l.height();
      text(x + w + 3, p + 3, tickLabel(t, tickStep(bar_ticks), false), "start", "tick");
    }
    text(frame_.width - 4, l.top + l.height() / 2, label, "middle", "label", -90);
  }
  std::ostringstream& raw() { return out_; }
  std::string finish() {
    out_ << "</svg>";
    return out_.str();
  }
  static std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.1f", v);
    return buf;
  }

 private:
  PlotFrame frame_;
  Layout layout_;
  std::ostringstream out_;
};

bool inRange(double v, const AxisRange& r) { return std::isfinite(v) && (!r.log || v > 0) && v >= r.lo - 1e-12 * std::abs(r.lo) && v <= r.hi + 1e-12 * std::abs(r.hi); }

void legend(Svg& svg, const std::vector<std::pair<std::string, std::string>>& entries) {
  double y = svg.layout().top + 10;
  for (const auto& [name, color] : entries) {
    if (name.empty()) continue;
    const double x = svg.layout().right - 70;
    svg.raw() << "<rect x=\"" << Svg::fmt(x) << "\" y=\"" << Svg::fmt(y - 6) << "\" width=\"8\" height=\"8\" fill=\"" << color << "\"/>";
    svg.text(x + 11, y + 1, name, "start", "legend");
    y += 12;
  }
}

}  // namespace

std::string escapeXml(const std::string& text) {
  std::string out;
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string formatNumber(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.3g", v);
  return buf;
}

AxisRange fitRange(const std::vector<double>& values, bool log) {
  double lo = INFINITY, hi = -INFINITY;
  for (double v : values)
    if (std::isfinite(v) && (!log || v > 0)) lo = std::min(lo, v), hi = std::max(hi, v);
  if (!std::isfinite(lo)) return {log ? 0.1 : 0.0, 1.0, log};
  if (log) return {std::pow(10.0, std::floor(std::log10(lo))), std::pow(10.0, std::ceil(std::log10(hi) - 1e-12)), true};
  const double pad = hi > lo ? 0.05 * (hi - lo) : std::max(1e-12, 0.5 * std::abs(lo));
  return {lo - pad, hi + pad, false};
}

std::string heatmapSvg(const Eigen::MatrixXd& m, const ColorScale& scale, const PlotFrame& frame, AxisRange x, AxisRange y,
                       const std::string& value_label, int max_pixels) {
  Svg svg(frame, true);
  const auto& l = svg.layout();
  const RgbImage image = heatmapImage(m, scale, max_pixels);
  if (image.width > 0)
    svg.raw() << "<image x=\"" << Svg::fmt(l.left) << "\" y=\"" << Svg::fmt(l.top) << "\" width=\"" << Svg::fmt(l.width())
              << "\" height=\"" << Svg::fmt(l.height()) << "\" preserveAspectRatio=\"none\" class=\"heat\" href=\"data:image/png;base64,"
              << base64(encodePng(image)) << "\"/>";
  svg.axes(x, y, true);
  svg.colourBar(scale, value_label, {scale.lo, scale.hi, false});
  return svg.finish();
}

std::string linePlotSvg(const std::vector<Series>& series, const PlotFrame& frame, AxisRange x, AxisRange y) {
  Svg svg(frame, false);
  svg.axes(x, y);
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& s : series) {
    std::ostringstream points;
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
      if (inRange(s.x[i], x) && inRange(s.y[i], y)) points << Svg::fmt(svg.px(s.x[i], x)) << "," << Svg::fmt(svg.py(s.y[i], y)) << " ";
    svg.raw() << "<polyline fill=\"none\" stroke=\"" << s.color << "\" stroke-width=\"1.5\" points=\"" << points.str() << "\"/>";
    if (s.markers)
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (inRange(s.x[i], x) && inRange(s.y[i], y))
          svg.raw() << "<circle cx=\"" << Svg::fmt(svg.px(s.x[i], x)) << "\" cy=\"" << Svg::fmt(svg.py(s.y[i], y)) << "\" r=\"2\" fill=\"" << s.color << "\"/>";
    entries.emplace_back(s.name, s.color);
  }
  legend(svg, entries);
  return svg.finish();
}

std::string scatterSvg(const std::vector<PointSet>& sets, const PlotFrame& frame, AxisRange x, AxisRange y,
                       const ColorScale* color_scale, const std::string& value_label, AxisRange color_range) {
  Svg svg(frame, color_scale != nullptr);
  svg.axes(x, y);
  std::vector<std::pair<std::string, std::string>> entries;
  for (const auto& s : sets) {
    if (s.squares) {
      svg.raw() << "<path fill-opacity=\"" << s.opacity << "\" fill=\"" << (s.colors.empty() ? "#555555" : s.colors[0]) << "\" d=\"";
      const double side = 2 * s.radius;
      for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i)
        if (inRange(s.x[i], x) && inRange(s.y[i], y))
          svg.raw() << "M" << Svg::fmt(svg.px(s.x[i], x) - s.radius) << " " << Svg::fmt(svg.py(s.y[i], y) - s.radius) << "h" << side
                    << "v" << side << "h-" << side << "z";
      svg.raw() << "\"/>";
      entries.emplace_back(s.name, s.colors.empty() ? "#555555" : s.colors[0]);
      continue;
    }
    svg.raw() << "<g fill-opacity=\"" << s.opacity << "\">";
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!inRange(s.x[i], x) || !inRange(s.y[i], y)) continue;
      const std::string& c = s.colors.size() == s.x.size() ? s.colors[i] : s.colors.empty() ? std::string("#555555") : s.colors[0];
      svg.raw() << "<circle cx=\"" << Svg::fmt(svg.px(s.x[i], x)) << "\" cy=\"" << Svg::fmt(svg.py(s.y[i], y)) << "\" r=\"" << s.radius
                << "\" fill=\"" << c << "\"/>";
    }
    svg.raw() << "</g>";
    entries.emplace_back(s.name, s.colors.empty() ? "#555555" : s.colors[s.colors.size() / 2]);
  }
  legend(svg, entries);
  if (color_scale) svg.colourBar(*color_scale, value_label, color_range);
  return svg.finish();
}

std::string smallMultiplesSvg(const std::string& title, const std::string& x_label, const std::string& y_label,
                              const std::vector<std::vector<double>>& curves, const std::vector<std::string>& names, int columns,
                              double x_last) {
  const int n = static_cast<int>(curves.size());
  columns = std::max(1, std::min(columns, n));
  const int rows = (n + columns - 1) / columns;
  const double cell_w = 58, cell_h = 40, pad = 4, left = 46, top = 24;
  double y_max = 0;
  std::size_t length = 0;
  for (const auto& c : curves) {
    for (double v : c)
      if (std::isfinite(v)) y_max = std::max(y_max, v);
    length = std::max(length, c.size());
  }
  if (y_max <= 0) y_max = 1;
  PlotFrame frame{title, x_label, y_label, static_cast<int>(left + columns * cell_w + 10), static_cast<int>(top + rows * cell_h + 40)};
  std::ostringstream out;
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"plot\" width=\"" << frame.width << "\" height=\"" << frame.height
      << "\" viewBox=\"0 0 " << frame.width << " " << frame.height << "\" role=\"img\" aria-label=\"" << escapeXml(title)
      << "\"><title>" << escapeXml(title) << "</title>";
  auto label = [&](double x, double y, const std::string& s, const char* anchor, const char* cls, double rotate = 0) {
    out << "<text x=\"" << Svg::fmt(x) << "\" y=\"" << Svg::fmt(y) << "\" text-anchor=\"" << anchor << "\" class=\"" << cls << "\"";
    if (rotate != 0) out << " transform=\"rotate(" << rotate << " " << Svg::fmt(x) << " " << Svg::fmt(y) << ")\"";
    out << ">" << escapeXml(s) << "</text>";
  };
  label(frame.width / 2.0, 14, title, "middle", "title");
  for (int i = 0; i < n; ++i) {
    const double x0 = left + (i % columns) * cell_w, y0 = top + (i / columns) * cell_h;
    const double w = cell_w - pad, h = cell_h - pad - 8;
    out << "<rect x=\"" << Svg::fmt(x0) << "\" y=\"" << Svg::fmt(y0 + 8) << "\" width=\"" << Svg::fmt(w) << "\" height=\"" << Svg::fmt(h)
        << "\" class=\"frame\"/>";
    label(x0 + 2, y0 + 7, i < static_cast<int>(names.size()) ? names[static_cast<std::size_t>(i)] : "", "start", "legend");
    const auto& c = curves[static_cast<std::size_t>(i)];
    std::ostringstream points;
    for (std::size_t j = 0; j < c.size(); ++j)
      if (std::isfinite(c[j]))
        points << Svg::fmt(x0 + (c.size() > 1 ? static_cast<double>(j) / static_cast<double>(c.size() - 1) : 0.5) * w) << ","
               << Svg::fmt(y0 + 8 + h - std::clamp(c[j] / y_max, 0.0, 1.0) * h) << " ";
    out << "<polyline fill=\"none\" stroke=\"#2166ac\" stroke-width=\"1\" points=\"" << points.str() << "\"/>";
  }
  const double bottom = top + rows * cell_h;
  label(left - 4, top + 12, formatNumber(y_max), "end", "tick");
  label(left - 4, bottom, "0", "end", "tick");
  label(left, bottom + 12, "0", "start", "tick");
  label(left + cell_w - pad, bottom + 12, formatNumber(x_last >= 0 ? x_last : static_cast<double>(length > 0 ? length - 1 : 0)),
        "end", "tick");
  label(left + columns * cell_w / 2, frame.height - 6, x_label, "middle", "label");
  label(11, top + rows * cell_h / 2, y_label, "middle", "label", -90);
  out << "</svg>";
  return out.str();
}

}  // namespace posgeom::report
