#include "posgeom/report/png.h"

#include "png_decode.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Png, RoundTripsThroughAnIndependentReader) {
  report::RgbImage image{7, 5, {}};
  for (int i = 0; i < 7 * 5 * 3; ++i) image.rgb.push_back(static_cast<uint8_t>(i * 37 % 256));
  const auto decoded = decodePng(report::encodePng(image));  // checks signature, CRCs, zlib
  EXPECT_EQ(decoded.width, 7);
  EXPECT_EQ(decoded.height, 5);
  EXPECT_EQ(decoded.channels, 3);
  EXPECT_EQ(decoded.pixels, image.rgb);
  EXPECT_THROW(report::encodePng({2, 2, {1, 2, 3}}), std::invalid_argument);
}

TEST(Png, Base64MatchesTheStandardVectors) {  // RFC 4648 section 10
  EXPECT_EQ(report::base64(""), "");
  EXPECT_EQ(report::base64("f"), "Zg==");
  EXPECT_EQ(report::base64("fo"), "Zm8=");
  EXPECT_EQ(report::base64("foo"), "Zm9v");
  EXPECT_EQ(report::base64("foobar"), "Zm9vYmFy");
}

}  // namespace
}  // namespace posgeom::testing
