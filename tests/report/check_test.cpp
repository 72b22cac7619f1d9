#include "posgeom/report/check.h"

#include <algorithm>

#include "test_support.h"

namespace posgeom::testing {
namespace {

const auto kSummary = nlohmann::json::parse(R"({"model": "m", "layers": [
  {"layer": 0, "screenot_rank": 6, "stable_rank": 3.0, "relative_norm": 0.2},
  {"layer": 1, "screenot_rank": 5, "stable_rank": 2.0, "relative_norm": 0.3}]})");

bool allOk(const std::vector<report::CheckRow>& rows) {
  return std::all_of(rows.begin(), rows.end(), [](const auto& r) { return r.ok; });
}

TEST(Check, LayersAreMatchedByTheirIndexNotTheirPosition) {
  const auto ref = nlohmann::json::parse(R"({"layers": [{"layer": 1, "stable_rank": 2.0000001}]})");
  const auto rows = report::checkAgainstReference(kSummary, ref, {});
  ASSERT_EQ(rows.size(), 2u);  // layer and stable_rank
  EXPECT_TRUE(allOk(rows));
}

TEST(Check, MovedNumbersMissingKeysAndRanksAreRegressions) {
  auto ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "stable_rank": 3.1}]})");
  EXPECT_FALSE(allOk(report::checkAgainstReference(kSummary, ref, {})));
  ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "screenot_rank": 7}]})");
  EXPECT_FALSE(allOk(report::checkAgainstReference(kSummary, ref, {})));
  ref = nlohmann::json::parse(R"({"layers": [{"layer": 3, "stable_rank": 3.0}]})");
  const auto rows = report::checkAgainstReference(kSummary, ref, {});
  EXPECT_EQ(rows.back().actual, "missing");
  EXPECT_FALSE(allOk(rows));
}

TEST(Check, PerKeyTolerancesOverrideTheDefault) {
  const auto ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "relative_norm": 0.201}]})");
  report::CheckOptions o;
  EXPECT_FALSE(allOk(report::checkAgainstReference(kSummary, ref, o)));
  o.per_key["relative_norm"] = {1e-2, 0};
  EXPECT_TRUE(allOk(report::checkAgainstReference(kSummary, ref, o)));
}

TEST(Check, ToleranceInTheReferenceFileAlsoLoosensRanks) {
  const auto ref = nlohmann::json::parse(R"({"tolerances": {"screenot_rank": {"atol": 2}, "stable_rank": {"rtol": 0.1}},
    "layers": [{"layer": 0, "screenot_rank": 8, "stable_rank": 3.2}, {"layer": 1, "screenot_rank": 8}]})");
  auto row = [](const std::vector<report::CheckRow>& rows, const std::string& path) {
    for (const auto& r : rows)
      if (r.path == path) return r;
    return report::CheckRow{"absent", "", "", 0, 0, false};
  };
  const auto rows = report::checkAgainstReference(kSummary, ref, {});
  EXPECT_EQ(rows.size(), 5u);  // two layer keys and three numbers; "tolerances" itself is not checked
  EXPECT_TRUE(row(rows, "layers[layer=0].screenot_rank").ok);   // 6 within 8 +- 2
  EXPECT_TRUE(row(rows, "layers[layer=0].stable_rank").ok);     // 3.0 within 10% of 3.2
  EXPECT_FALSE(row(rows, "layers[layer=1].screenot_rank").ok);  // 5 is 3 away
  report::CheckOptions strict;
  strict.per_key["screenot_rank"] = {0, 0};  // the command line wins over the file
  EXPECT_FALSE(row(report::checkAgainstReference(kSummary, ref, strict), "layers[layer=0].screenot_rank").ok);
}

TEST(Check, TableListsWhatMovedFirst) {
  const auto ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "stable_rank": 3.0, "relative_norm": 0.5}]})");
  const auto text = report::formatCheck(report::checkAgainstReference(kSummary, ref, {}), false);
  EXPECT_NE(text.find("MOVED  layers[layer=0].relative_norm"), std::string::npos) << text;
  EXPECT_EQ(text.find("stable_rank"), std::string::npos);  // unchanged rows hidden
  EXPECT_NE(text.find("2 of 3 numbers within tolerance, 1 moved"), std::string::npos) << text;
}

}  // namespace
}  // namespace posgeom::testing
