#include "posgeom/report/colormap.h"

#include <cmath>

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::report;

TEST(Colormap, DivergingIsCentredAtZeroAndWhiteThere) {
  Eigen::MatrixXd m(2, 2);
  m << -0.5, 2.0, 0.0, 1.0;
  const auto scale = ColorScale::fit(m, ColorMap::kDiverging);
  EXPECT_EQ(scale.lo, -2.0);
  EXPECT_EQ(scale.hi, 2.0);
  EXPECT_EQ(hexColor(scale.color(0.0)), "#f7f7f7");
  EXPECT_EQ(hexColor(scale.color(-2.0)), "#2166ac");  // blue for negative
  EXPECT_EQ(hexColor(scale.color(2.0)), "#b2182b");   // red for positive
  EXPECT_EQ(hexColor(scale.color(NAN)), "#999999");
}

TEST(Colormap, SequentialRunsDarkToLightOverTheRange) {
  Eigen::MatrixXd m(1, 3);
  m << 3, 5, 7;
  const auto scale = ColorScale::fit(m, ColorMap::kSequential);
  EXPECT_EQ(hexColor(scale.color(3)), "#440154");
  EXPECT_EQ(hexColor(scale.color(7)), "#fde725");
  const Rgb mid = scale.color(5);
  EXPECT_EQ(hexColor(mid), "#21908d");
  EXPECT_EQ(ColorScale::fit(Eigen::MatrixXd::Constant(2, 2, 4.0), ColorMap::kSequential).hi, 5.0);  // constant data
}

TEST(Colormap, LargeMatricesAreAveragedIntoTheImage) {
  Eigen::MatrixXd m = Eigen::MatrixXd::Zero(100, 60);
  m.topRows(50).setConstant(1.0);
  const auto image = heatmapImage(m, {ColorMap::kSequential, 0, 1}, 10);
  EXPECT_EQ(image.width, 10);
  EXPECT_EQ(image.height, 10);
  EXPECT_EQ(image.rgb[0], 0xfd);                       // top rows: the value 1
  EXPECT_EQ(image.rgb[(9 * 10) * 3], 0x44);            // bottom rows: 0
  EXPECT_EQ(heatmapImage(Eigen::MatrixXd(3, 3).setOnes(), {ColorMap::kSequential, 0, 1}, 10).width, 3);  // small stays
}

}  // namespace
}  // namespace posgeom::testing
