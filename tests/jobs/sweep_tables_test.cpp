#include "posgeom/jobs/sweep_tables.h"

#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

jobs::SweepRun tableRun(const std::string& model, const std::vector<std::string>& columns) {
  jobs::SweepRun run;
  run.name = model + "-c";
  run.model = model;
  run.corpus = "c";
  run.table_columns = columns;
  return run;
}

// Every table from the runs' summaries, written out by hand: a run that ran with a failed
// check and a table layer its report lacks, and a skipped run, each noted in its row.
TEST(SweepTables, TablesHoldTheRunsNumbersAndNoteWhatIsMissing) {
  ScratchDir s;
  jobs::Sweep sweep;
  sweep.config = s / "sweep.toml";
  sweep.out = s / "out";
  sweep.runs.push_back(tableRun("a", {"stable_rank", "context_similarity", "head_classes"}));
  sweep.runs[0].table_layers = {0, 2, 5};
  sweep.runs[0].table_layers_key = "sweep.toml: [models.a].table-layers";
  sweep.runs.push_back(tableRun("b", {"stable_rank"}));
  fs::create_directories(s / "out/a-c");
  writeFile(s / "out/a-c/summary.json", R"({
    "layers": [{"layer": 0, "stable_rank": 1.5}, {"layer": 1, "stable_rank": 2.25}, {"layer": 2, "stable_rank": 3.5}],
    "context_similarity": {"b_mean": 0.125, "b_std": 0.5, "w_mean": 0.25, "w_std": 0.75},
    "heads": [{"block": 0, "class": "local"}, {"block": 0, "class": "uniform"}, {"block": 1, "class": "slow-decay"}]})");
  const std::vector<jobs::RunOutcome> outcomes{{jobs::RunStatus::kOk, "", false, "0 of 1 values within tolerance of a-c.json"},
                                               {jobs::RunStatus::kSkipped, "b: model directory does not exist", std::nullopt, ""}};
  jobs::writeSweepTables(sweep, outcomes);

  EXPECT_EQ(readFile(s / "out/table.csv"),
            "model,step,corpus,metric,layer,value\n"
            "a,,c,stable_rank,0,1.5\na,,c,stable_rank,2,3.5\n"
            "a,,c,context_b_mean,,0.125\na,,c,context_b_std,,0.5\na,,c,context_w_mean,,0.25\na,,c,context_w_std,,0.75\n"
            "a,,c,heads_local,0,1\na,,c,heads_slow-decay,0,0\na,,c,heads_uniform,0,1\n"
            "a,,c,heads_local,1,0\na,,c,heads_slow-decay,1,1\na,,c,heads_uniform,1,0\n");
  const auto table = readFile(s / "out/table.md");
  EXPECT_EQ(table.substr(0, table.find("\n\n")),
            "| model | corpus | stable_rank | context_similarity | head_classes | notes |\n"
            "|---|---|---|---|---|---|\n"
            "| a | c | 1.5 3.5 | B 0.125 ± 0.5, W 0.25 ± 0.75 | B0 l1 s0 u1; B1 l0 s1 u0 | "
            "a-c check: 0 of 1 values within tolerance of a-c.json; a-c has no layer 5 |\n"
            "| b | c |  |  |  | b-c skipped: b: model directory does not exist |");
  EXPECT_NE(table.find("(layer maps in sweep.toml)"), std::string::npos) << table;
  const auto status = io::readJsonFile(s / "out/sweep.json");
  EXPECT_EQ(status["config"], (s / "sweep.toml").string());
  ASSERT_EQ(status["runs"].size(), 2u);
  EXPECT_EQ(status["runs"][0]["out"], (s / "out/a-c").string());
  EXPECT_EQ(status["runs"][0]["check"], false);
  EXPECT_EQ(status["runs"][1]["status"], "skipped");
  EXPECT_TRUE(status["runs"][1]["check"].is_null());
  EXPECT_EQ(status["series"], nlohmann::json::array());  // no checkpoint series: no page
}

// The statuses' names are the ones sweep.json and table.md have always written.
TEST(SweepTables, RunStatusesAreNamedAsBefore) {
  EXPECT_EQ(jobs::runStatusName(jobs::RunStatus::kOk), "ok");
  EXPECT_EQ(jobs::runStatusName(jobs::RunStatus::kKept), "kept");
  EXPECT_EQ(jobs::runStatusName(jobs::RunStatus::kSkipped), "skipped");
  EXPECT_EQ(jobs::runStatusName(jobs::RunStatus::kFailed), "failed");
  EXPECT_TRUE((jobs::RunOutcome{jobs::RunStatus::kKept, "", std::nullopt, ""}.ran()));
  EXPECT_FALSE((jobs::RunOutcome{jobs::RunStatus::kFailed, "", std::nullopt, ""}.ran()));
}

}  // namespace
}  // namespace posgeom::testing
