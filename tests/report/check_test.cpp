#include "posgeom/report/check.h"

#include <algorithm>

#include "posgeom/base/error.h"
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
  EXPECT_NE(text.find("2 of 3 values within tolerance, 1 moved"), std::string::npos) << text;
}

// Every value is compared: a head's class (a string) that changed is a regression, as is a
// boolean; the top-level description is prose.
TEST(Check, StringsAndBooleansAreComparedForEquality) {
  const auto summary = nlohmann::json::parse(R"({"heads": [{"block": 0, "head": 1, "class": "local", "contextual": false}]})");
  auto ref = nlohmann::json::parse(R"({"description": "pinned on main", "heads": [{"block": 0, "head": 1, "class": "local", "contextual": false}]})");
  EXPECT_TRUE(allOk(report::checkAgainstReference(summary, ref, {})));
  EXPECT_EQ(report::checkAgainstReference(summary, ref, {}).size(), 4u);  // block, head, class, contextual
  ref["heads"][0]["class"] = "uniform";
  const auto rows = report::checkAgainstReference(summary, ref, {});
  EXPECT_FALSE(allOk(rows));
  EXPECT_NE(report::formatCheck(rows, false).find("MOVED  heads[block=0,head=1].class"), std::string::npos);
  ref["heads"][0]["class"] = "local";
  ref["heads"][0]["contextual"] = true;
  EXPECT_FALSE(allOk(report::checkAgainstReference(summary, ref, {})));
}

// Malformed references and tolerances are bad input naming the file, not regressions or
// internal errors.
TEST(Check, MalformedReferencesAndTolerancesAreBadInput) {
  auto refused = [](const nlohmann::json& ref, const report::CheckOptions& o, const std::string& message) {
    try {
      report::checkAgainstReference(kSummary, ref, o, "ref.json");
      ADD_FAILURE() << ref.dump() << " must be refused";
    } catch (const InputError& e) {
      EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    }
  };
  refused(nlohmann::json::parse("[1, 2]"), {}, "ref.json: is an array, not a JSON object");
  refused(nlohmann::json::parse(R"({"tolerances": {"stable_rank": {"rtol": "0.1"}}, "layers": []})"), {},
          "ref.json: tolerances.stable_rank.rtol must be a number >= 0 (got \"0.1\")");
  refused(nlohmann::json::parse(R"({"tolerances": {"stable_rank": {"atol": -1}}})"), {}, "tolerances.stable_rank.atol");
  refused(nlohmann::json::parse(R"({"tolerances": [1]})"), {}, "tolerances must be an object");
  report::CheckOptions negative;
  negative.tolerance.rtol = -1e-3;
  refused(nlohmann::json::parse(R"({"layers": []})"), negative, "--rtol/--atol: tolerances must be >= 0");
  report::CheckOptions per_key;
  per_key.per_key["stable_rank"] = {-1, 0};
  refused(nlohmann::json::parse(R"({"layers": []})"), per_key, "--tolerance stable_rank");
}

// A value the report lacks has no difference to show (it used to read "0.00e+00"); nor has a string.
TEST(Check, MissingValuesAndStringsShowNoDifference) {
  const auto ref = nlohmann::json::parse(R"({"model": "other", "layers": [{"layer": 3, "stable_rank": 3.0}, {"layer": 0, "stable_rank": 3.3}]})");
  const auto rows = report::checkAgainstReference(kSummary, ref, {});
  const auto text = report::formatCheck(rows, true);
  for (const std::string moved : {"layers[layer=3].stable_rank", "model"}) {
    const auto at = text.find("MOVED  " + moved);
    ASSERT_NE(at, std::string::npos) << text;
    const auto line = text.substr(at, text.find('\n', at) - at);
    EXPECT_EQ(line.back(), '-') << line;
    EXPECT_EQ(line.find("e+00"), std::string::npos) << line;
  }
  EXPECT_NE(text.find("9.09e-02"), std::string::npos) << text;  // 3.0 against 3.3: a number still has its difference
}

// A tolerance for a key no value of the reference has (a typo) used to loosen nothing, silently.
TEST(Check, AToleranceForAKeyTheReferenceLacksIsRefused) {
  const auto ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "relative_norm": 0.2}]})");
  report::CheckOptions o;
  o.per_key["relative_nrm"] = {0.1, 0};
  try {
    report::checkAgainstReference(kSummary, ref, o, "ref.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()), "--tolerance relative_nrm: the reference holds no value named 'relative_nrm' (did you mean 'relative_norm'?)");
  }
  o.per_key = {{"stable_rank", {0.1, 0}}};  // in the report, but not pinned by this reference
  EXPECT_THROW(report::checkAgainstReference(kSummary, ref, o, "ref.json"), InputError);
  o.per_key = {{"relative_norm", {0.1, 0}}};
  EXPECT_TRUE(allOk(report::checkAgainstReference(kSummary, ref, o, "ref.json")));
}

// A string where the report has a number is a malformed reference (exit 2), not a value
// that moved (exit 1); null stands for an undefined number and is compared.
TEST(Check, AValueOfAnotherKindThanTheReportsIsAMalformedReference) {
  auto ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "stable_rank": "3.0"}]})");
  try {
    report::checkAgainstReference(kSummary, ref, {}, "ref.json");
    ADD_FAILURE() << "no error";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "ref.json: layers[layer=0].stable_rank is a string (\"3.0\") where the report has a number (3.0): the reference is malformed");
  }
  ref = nlohmann::json::parse(R"({"model": 7})");
  EXPECT_THROW(report::checkAgainstReference(kSummary, ref, {}, "ref.json"), InputError);
  ref = nlohmann::json::parse(R"({"layers": [{"layer": 0, "stable_rank": null}]})");
  EXPECT_FALSE(allOk(report::checkAgainstReference(kSummary, ref, {}, "ref.json")));
}

}  // namespace
}  // namespace posgeom::testing
