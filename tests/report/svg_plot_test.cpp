#include "posgeom/report/svg_plot.h"

#include <algorithm>

#include "png_decode.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::report;

std::vector<std::string> texts(const std::string& svg) {
  std::vector<std::string> out;
  for (std::size_t at = 0; (at = svg.find("<text", at)) != std::string::npos;) {
    const auto open = svg.find('>', at) + 1, close = svg.find("</text>", open);
    out.push_back(svg.substr(open, close - open));
    at = close;
  }
  return out;
}

bool contains(const std::vector<std::string>& v, const std::string& s) { return std::find(v.begin(), v.end(), s) != v.end(); }

TEST(SvgPlot, HeatmapHasTitleAxesColourBarAndADecodableImage) {
  Eigen::MatrixXd m(4, 6);
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 6; ++c) m(r, c) = 11.05 + 0.02 * (r + c);  // a narrow range: ticks must still differ
  const auto svg = heatmapSvg(m, ColorScale::fit(m, ColorMap::kSequential), {"A & B", "key", "query"}, {0, 6, false}, {0, 4, false},
                              "value");
  EXPECT_NE(svg.find("<title>A &amp; B</title>"), std::string::npos);
  const auto labels = texts(svg);
  EXPECT_TRUE(contains(labels, "key"));
  EXPECT_TRUE(contains(labels, "query"));
  EXPECT_TRUE(contains(labels, "value"));
  EXPECT_TRUE(contains(labels, "11.10"));  // colour-bar ticks at 0.05 spacing, two decimals
  EXPECT_TRUE(contains(labels, "11.15"));
  const auto start = svg.find("base64,") + 7, end = svg.find('"', start);
  const auto png = decodePng(base64Decode(svg.substr(start, end - start)));
  EXPECT_EQ(png.width, 6);
  EXPECT_EQ(png.height, 4);
}

TEST(SvgPlot, LogAxesLeaveOutNonPositiveValues) {
  const Series s{"P", {1, 2, 3, 4}, {100, 10, 0, 1}, "#000000", true};
  const auto range = fitRange(s.y, true);
  EXPECT_EQ(range.lo, 1.0);
  EXPECT_EQ(range.hi, 100.0);
  const auto svg = linePlotSvg({s}, {"t", "x", "y"}, {0, 5, false}, range);
  size_t circles = 0;
  for (std::size_t at = 0; (at = svg.find("<circle", at)) != std::string::npos; ++at) ++circles;
  EXPECT_EQ(circles, 3u);  // the zero has no place on a log axis
  const auto labels = texts(svg);
  EXPECT_TRUE(contains(labels, "1"));
  EXPECT_TRUE(contains(labels, "100"));
  EXPECT_TRUE(contains(labels, "P"));  // legend
}

TEST(SvgPlot, ScatterAndSmallMultiples) {
  const PointSet a{"grey", {0, 1}, {0, 1}, {"#999999"}, 1, 0.5};
  const ColorScale scale{ColorMap::kSequential, 0, 10};
  const auto svg = scatterSvg({a}, {"s", "x", "y"}, {-1, 2, false}, {-1, 2, false}, &scale, "position", {0, 10, false});
  EXPECT_NE(svg.find("fill-opacity=\"0.5\""), std::string::npos);
  EXPECT_TRUE(contains(texts(svg), "position"));
  const auto multiples = smallMultiplesSvg("k", "key", "K", {{0, 1, 0}, {0, 0, 2}}, {"0 l", "1 u"}, 8, 99);
  EXPECT_TRUE(contains(texts(multiples), "1 u"));
  EXPECT_TRUE(contains(texts(multiples), "99"));  // the x axis ends at the given last position
  EXPECT_TRUE(contains(texts(multiples), "2"));   // the shared y maximum
  EXPECT_EQ(escapeXml("<a\">"), "&lt;a&quot;&gt;");
}

}  // namespace
}  // namespace posgeom::testing
