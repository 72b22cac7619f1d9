#include "posgeom/report/rope_band_tables.h"

#include <cmath>

#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(RopeBandTables, AHeadsBandsInItsSummaryEntry) {
  auto heads = sampleHeads(2, 3, 12, 0);
  EXPECT_TRUE(report::ropeBandsJson(heads[0]).is_null());  // no RoPE
  addRopeBands(heads, 3, 2);
  heads[1].rope_bands->q_unturned_norm = 0.5;
  const auto j = report::ropeBandsJson(heads[1]);
  EXPECT_EQ(j["kernel_share"], nlohmann::json({0.0, 1.0, 0.0, 0.0}));  // head 1: band 1 of 3 + the unturned
  EXPECT_EQ(j["attention_share"].size(), 4u);
  EXPECT_EQ(j["q_pair_norm"], nlohmann::json({1.0, 1.5, 2.0}));
  EXPECT_EQ(j["q_unturned_norm"], 0.5);
  EXPECT_TRUE(j["k_unturned_norm"].is_null());  // NaN
  EXPECT_EQ(j["etc_highest_band"], 3.0);
  EXPECT_EQ(j["kernel_mass"], "spread");  // the middle band of three
  EXPECT_EQ(j["attention_mass"], "spread");
  auto unsampled = sampleHeads(2, 1, 12, 0);
  addRopeBands(unsampled, 2, 0, false);
  const auto u = report::ropeBandsJson(unsampled[0]);
  EXPECT_TRUE(u["attention_mass"].is_null());
  EXPECT_TRUE(u["attention_share"][0].is_null());
}

TEST(RopeBandTables, LayoutOncePerBlockAndARowPerBand) {
  auto heads = sampleHeads(3, 2, 12, 0);  // blocks 0 and 1, two heads each
  EXPECT_TRUE(report::ropeBandLayoutJson(heads).empty());
  EXPECT_TRUE(report::ropeBandRows(heads).empty());
  addRopeBands(heads, 2, 4);
  heads[2].rope_bands.reset();  // block 1's first head does not turn (as a mixed model's)
  const auto layout = report::ropeBandLayoutJson(heads);
  ASSERT_EQ(layout.size(), 2u);
  EXPECT_EQ(layout[1]["block"], 1);
  ASSERT_EQ(layout[0]["bands"].size(), 3u);
  EXPECT_EQ(layout[0]["bands"][1]["first_pair"], 1);
  EXPECT_EQ(layout[0]["bands"][1]["dims"], 2);
  EXPECT_NEAR(layout[0]["bands"][0]["shortest_wavelength"].get<double>(), 2 * M_PI, 1e-12);  // pair 0 at frequency 1
  EXPECT_NEAR(layout[0]["bands"][1]["longest_wavelength"].get<double>(), 2 * M_PI * 10, 1e-9);  // 100^(-1/2)
  EXPECT_EQ(layout[0]["bands"][2]["dims"], 4);
  EXPECT_TRUE(layout[0]["bands"][2]["shortest_wavelength"].is_null());  // unturned
  const auto rows = report::ropeBandRows(heads);
  ASSERT_EQ(rows.size(), 9u);  // three turning heads x three bands
  EXPECT_EQ(rows[3]["head"], 1);
  EXPECT_EQ(rows[3]["band"], 0);
  EXPECT_EQ(rows[4]["kernel_share"], 1.0);  // head 1's band 1
  EXPECT_EQ(rows[8]["block"], 1);
  EXPECT_NEAR(rows[8]["attention_share"].get<double>(), 1.0 / 3.0, 1e-15);
}

}  // namespace
}  // namespace posgeom::testing
