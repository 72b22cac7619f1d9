#include "posgeom/report/run_summary.h"

#include <cmath>
#include <functional>

#include "posgeom/base/error.h"
#include "posgeom/report/tables.h"
#include "report_samples.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace keys = report::keys;

std::string inputError(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

// The reader reads what the writer writes, through the same names.
TEST(RunSummary, ReadsWhatTheWriterWrites) {
  const auto layers = sampleLayers(3, 16, 4);
  const auto heads = sampleHeads(3, 2, 16, 0);
  ScratchDir s;
  report::writeTables(s.path(), sampleSummary(layers, heads), layers, heads);
  const auto summary = report::RunSummary::read(s / keys::kSummaryFile);
  EXPECT_EQ(summary.where(), (s / "summary.json").string());
  EXPECT_EQ(summary.title(), "synthetic");

  const auto rows = summary.layers();
  ASSERT_EQ(rows.size(), layers.size());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    EXPECT_EQ(rows[i].layer, layers[i].layer);
    EXPECT_DOUBLE_EQ(rows[i].number(keys::kStableRank), layers[i].stable_rank);
    EXPECT_EQ(rows[i].find(keys::kScreenotRank)->get<int64_t>(), layers[i].screenot.rank);  // an integer stays one
    for (const char* column : keys::kLayersCsvColumns) EXPECT_NE(rows[i].find(column), nullptr) << column;
  }
  EXPECT_TRUE(std::isnan(rows[0].number("no_such_key")));
  EXPECT_EQ(summary.crossLayer().size(), layers.size() - 1);
  EXPECT_DOUBLE_EQ(summary.crossLayer()[0].to, static_cast<double>(layers[1].layer));

  ASSERT_TRUE(summary.hasHeads());
  const auto read = summary.heads();
  ASSERT_EQ(read.size(), heads.size());
  for (std::size_t i = 0; i < read.size(); ++i) {
    EXPECT_EQ(read[i].block, heads[i].block);
    EXPECT_EQ(read[i].kind, heads[i].kind);
    EXPECT_DOUBLE_EQ(read[i].number(keys::kEtc), heads[i].etc);
    for (const char* column : keys::kHeadsCsvColumns) EXPECT_NE(read[i].find(column), nullptr) << column;
  }
  EXPECT_EQ(summary.headKinds().size(), heads.size());
  // heads.csv's header is the columns, named once.
  std::string header;
  for (const char* column : keys::kHeadsCsvColumns) header += (header.empty() ? "" : ",") + std::string(column);
  EXPECT_EQ(readFile(s / "heads.csv").substr(0, header.size() + 1), header + "\n");
}

TEST(RunSummary, OptionalSectionsAreAbsentNotErrors) {
  const report::RunSummary summary(nlohmann::json{{keys::kSource, "hidden.safetensors"}, {keys::kModelCommit, "abc"}});
  EXPECT_EQ(summary.title(), "hidden.safetensors");
  EXPECT_FALSE(summary.hasHeads());
  EXPECT_TRUE(summary.heads().empty());
  EXPECT_TRUE(summary.headKinds().empty());
  EXPECT_EQ(summary.find(keys::kSweep), nullptr);
  EXPECT_EQ(summary.text(keys::kModelCommit), "abc");
  EXPECT_EQ(summary.text(keys::kModelFingerprint), "");
  EXPECT_EQ(report::RunSummary().title(), "analysis");
  EXPECT_EQ(report::RunSummary(nlohmann::json::array()).find(keys::kLayers), nullptr);  // not an object: nothing in it
}

TEST(RunSummary, AMissingKeyNamesTheFileAndTheKey) {
  ScratchDir s;
  writeFile(s / "summary.json", R"({"layers": [{"layer": 0}, {"stable_rank": 2.0}], "heads": [{"block": 0}]})");
  const auto summary = report::RunSummary::read(s / "summary.json");
  const std::string file = (s / "summary.json").string();
  EXPECT_EQ(inputError([&] { summary.layers(); }), file + ": layers[1] has no \"layer\"");
  EXPECT_EQ(inputError([&] { summary.crossLayer(); }), file + ": has no \"cross_layer\" list: not a posgeom report's summary");
  EXPECT_EQ(inputError([&] { summary.heads(); }), file + ": heads[0] has no \"class\"");
  writeFile(s / "summary.json", R"({"layers": [{"layer": "first"}]})");
  EXPECT_EQ(inputError([&] { report::RunSummary::read(s / "summary.json").layers(); }),
            file + ": layers[0].layer is \"first\", not a number");
  // A class no kind is named reads as none: counted nowhere, as before.
  const report::RunSummary odd(nlohmann::json{{keys::kHeads, {{{keys::kBlock, 1}, {keys::kClass, "sharp"}}}}});
  ASSERT_EQ(odd.heads().size(), 1u);
  EXPECT_EQ(odd.heads()[0].kind, std::nullopt);
  // An unreadable file: io::readJsonFile's message, naming it.
  const auto missing = inputError([&] { report::RunSummary::read(s / "none.json"); });
  EXPECT_EQ(missing.rfind((s / "none.json").string() + ": ", 0), 0u) << missing;
}

}  // namespace
}  // namespace posgeom::testing
