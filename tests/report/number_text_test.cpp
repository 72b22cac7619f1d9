#include "posgeom/report/number_text.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <limits>
#include <random>

namespace posgeom::report {
namespace {

TEST(NumberText, ShortestTextThatReadsBackTheSameDouble) {
  EXPECT_EQ(numberText(0.1), "0.1");
  EXPECT_EQ(numberText(1.0 / 3.0), "0.3333333333333333");
  EXPECT_EQ(numberText(2), "2");
  EXPECT_EQ(numberText(-0.0), "-0");
  EXPECT_EQ(numberText(1e-300), "1e-300");
  EXPECT_EQ(numberText(std::numeric_limits<double>::infinity()), "inf");
  EXPECT_EQ(numberText(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(numberText(std::nan("")), "nan");
  // Every bit pattern class: normal, subnormal, extremes, and random doubles of all sizes.
  std::mt19937_64 rng(7);
  std::vector<double> values{std::numeric_limits<double>::max(), std::numeric_limits<double>::min(),
                             std::numeric_limits<double>::denorm_min(), -2.2250738585072014e-308, 0.30000000000000004};
  std::uniform_real_distribution<double> exponent(-300, 300), mantissa(-1, 1);
  for (int i = 0; i < 20000; ++i) values.push_back(mantissa(rng) * std::pow(10.0, exponent(rng)));
  for (const double v : values) {
    const std::string text = numberText(v);
    EXPECT_EQ(std::strtod(text.c_str(), nullptr), v) << text;
    EXPECT_LE(text.size(), 24u) << text;
  }
}

TEST(NumberText, AppendsToWhatIsThere) {
  std::string row = "3,";
  appendNumber(row, 0.25);
  row += ',';
  appendNumber(row, -1.5e10);
  EXPECT_EQ(row, "3,0.25,-1.5e+10");
}

}  // namespace
}  // namespace posgeom::report
