#include <sstream>

#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(BatchCommand, ExitCodeSaysWhetherEveryRunRan) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const std::string model = (sharedDir() / "fixtures/models/tiny-llama").string();
  const std::string head = "[analyze]\nseq-len = 16\nnum-seqs = 4\nscreenot-k = 2\nlayer = [0, 2]\n[corpora.random]\ncorpus = \"random\"\n";
  writeFile(s / "ok.toml", head + "[models.llama]\nmodel = \"" + model + "\"\n");
  const auto ok = runPosgeom({"batch", (s / "ok.toml").string(), "--out", (s / "ok").string()});
  ASSERT_EQ(ok.exit_code, 0) << ok.err;
  EXPECT_NE(ok.out.find("1 of 1 runs have a report: "), std::string::npos) << ok.out;
  EXPECT_EQ(io::readJsonFile(s / "ok/llama-random/summary.json")["layers"].size(), 2u);  // the array became --layer 0,2
  const auto table = readFile(s / "ok/table.md");

  // Run again: the report is kept (not rerun, not reported as skipped), the table the same.
  const auto again = runPosgeom({"batch", (s / "ok.toml").string(), "--out", (s / "ok").string()});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("1 of 1 runs have a report (1 kept from an earlier run): "), std::string::npos) << again.out;
  EXPECT_EQ(io::readJsonFile(s / "ok/sweep.json")["runs"][0]["status"], "kept");
  EXPECT_EQ(readFile(s / "ok/table.md"), table);
  const auto forced = runPosgeom({"batch", (s / "ok.toml").string(), "--out", (s / "ok").string(), "--force"});
  ASSERT_EQ(forced.exit_code, 0) << forced.err;
  EXPECT_EQ(io::readJsonFile(s / "ok/sweep.json")["runs"][0]["status"], "ok");

  // A run whose numbers moved ran, but did not match: the line tells the two apart.
  std::filesystem::create_directories(s / "ref");
  writeFile(s / "ref/llama-random.json", R"({"layers": [{"layer": 0, "stable_rank": 1e6}]})");
  writeFile(s / "moved.toml", "reference = \"./ref\"\n" + head + "[models.llama]\nmodel = \"" + model + "\"\n");
  const auto moved = runPosgeom({"batch", (s / "moved.toml").string(), "--out", (s / "moved").string()});
  EXPECT_EQ(moved.exit_code, 1);
  EXPECT_NE(moved.out.find("1 of 1 runs have a report; 0 of 1 checked runs matched their reference (see "), std::string::npos)
      << moved.out;

  writeFile(s / "partial.toml", head + "[models.llama]\nmodel = \"" + model + "\"\n[models.gone]\nmodel = \"./gone\"\n");
  const auto partial = runPosgeom({"batch", (s / "partial.toml").string(), "--out", (s / "partial").string()});
  EXPECT_EQ(partial.exit_code, 1);
  EXPECT_NE(partial.out.find("1 of 2 runs have a report; 1 skipped (see "), std::string::npos) << partial.out;
  EXPECT_TRUE(std::filesystem::exists(s / "partial/table.md"));

  writeFile(s / "typo.toml", head + "[models.llama]\nmodel = \"" + model + "\"\nseq-lenn = 3\n");
  const auto typo = runPosgeom({"batch", (s / "typo.toml").string(), "--out", (s / "typo").string()});
  EXPECT_EQ(typo.exit_code, 2);
  EXPECT_NE(typo.err.find((s / "typo.toml").string() + ": [models.llama].seq-lenn: is not an analyze option (did you mean seq-len?)"),
            std::string::npos)
      << typo.err;
  EXPECT_FALSE(std::filesystem::exists(s / "typo/llama-random"));  // nothing ran
}

// Probe 3, case 214: run again after [analyze] seq-len changed, the old report (seq_len 64)
// was "kept" and tabled with exit 0. Now it runs again, and the log says why.
TEST(BatchCommand, ARunWhoseOptionsChangedRunsAgain) {
  ScratchDir s;
  const std::string model = (std::filesystem::path(POSGEOM_SOURCE_DIR) / "models/default").string();
  auto sweep = [&](const std::string& seq_len) {
    writeFile(s / "keep.toml", "[analyze]\nseq-len = " + seq_len + "\nnum-seqs = 4\nscreenot-k = 2\n[models.m]\nmodel = \"" + model +
                                   "\"\n[corpora.c]\ncorpus = \"random\"\n");
    return runPosgeom({"batch", (s / "keep.toml").string(), "--out", (s / "keep").string()});
  };
  ASSERT_EQ(sweep("16").exit_code, 0);
  const auto again = sweep("8");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_NE(again.out.find("1 of 1 runs have a report: "), std::string::npos) << again.out;  // none kept
  EXPECT_NE(again.err.find("m-c: runs again: the report in " + (s / "keep/m-c").string() +
                           " is not this run's: it was made with other options: seq-len (then \"16\", now \"8\")"),
            std::string::npos)
      << again.err;
  EXPECT_EQ(io::readJsonFile(s / "keep/m-c/summary.json")["seq_len"], 8);
  EXPECT_EQ(io::readJsonFile(s / "keep/sweep.json")["runs"][0]["status"], "ok");
}

// Under a distributed launch each run runs over all ranks and rank 0 alone writes: the
// reports and the table are one process's; run again, the kept reports are kept on every
// rank alike (rank 0 sees them, and says so to the others); a run that fails stops the
// sweep on every rank.
TEST(BatchCommand, ADistributedSweepRunsEachRunOverAllRanks) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  ScratchDir s;
  const std::string model = (sharedDir() / "fixtures/models/tiny-llama").string();
  writeFile(s / "sweep.toml",
            "[analyze]\nseq-len = 16\nnum-seqs = 6\nbatch-size = 1\nscreenot-k = 2\n[corpora.random]\n"
            "corpus = \"random\"\n[corpora.probe]\ncorpus = \"repeated-random\"\n[models.llama]\nmodel = \"" + model + "\"\n");
  ASSERT_EQ(runPosgeom({"batch", (s / "sweep.toml").string(), "--out", (s / "one").string()}).exit_code, 0);
  for (const bool again : {false, true}) {
    LaunchedRanks ranks(2, [&](int rank) {
      return std::vector<std::string>{"--threads", "1", "batch", (s / "sweep.toml").string(), "--dist-timeout", "60", "--out",
                                      (s / (rank == 0 ? "ranks" : "rank1")).string()};
    });
    const auto results = ranks.wait();
    ASSERT_EQ(results[0].exit_code, 0) << results[0].err;
    ASSERT_EQ(results[1].exit_code, 0) << results[1].err;
    EXPECT_NE(results[0].out.find(again ? "2 of 2 runs have a report (2 kept from an earlier run)" : "2 of 2 runs have a report: "),
              std::string::npos)
        << results[0].out;
    EXPECT_EQ(results[1].out, "");
    EXPECT_FALSE(std::filesystem::exists(s / "rank1"));
  }
  for (const std::string run : {"llama-random", "llama-probe"}) {
    const auto summary = io::readJsonFile(s / "ranks" / run / "summary.json");
    EXPECT_EQ(summary["distributed"]["world_size"], 2) << run;
    EXPECT_EQ(summary["layers"].size(), io::readJsonFile(s / "one" / run / "summary.json")["layers"].size());
  }
  // The same rows (model, step, corpus, metric, layer); their values are the runs' own.
  auto keys = [](const std::string& csv) {
    std::vector<std::string> rows;
    std::istringstream in(csv);
    for (std::string line; std::getline(in, line);) rows.push_back(line.substr(0, line.rfind(',')));
    return rows;
  };
  EXPECT_EQ(keys(readFile(s / "ranks/table.csv")), keys(readFile(s / "one/table.csv")));

  writeFile(s / "gone.toml", readFile(s / "sweep.toml") + "[models.gone]\nmodel = \"./gone\"\n");
  LaunchedRanks ranks(2, [&](int) {
    return std::vector<std::string>{"batch", (s / "gone.toml").string(), "--dist-timeout", "60", "--out", (s / "gone").string()};
  });
  for (const auto& r : ranks.wait()) {
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("gone"), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace posgeom::testing
