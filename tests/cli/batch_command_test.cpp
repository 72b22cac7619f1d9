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
  EXPECT_NE(typo.err.find((s / "typo.toml").string() + ": run llama-random: "), std::string::npos) << typo.err;
  EXPECT_NE(typo.err.find("seq-lenn"), std::string::npos) << typo.err;
  EXPECT_FALSE(std::filesystem::exists(s / "typo/llama-random"));  // nothing ran
}

}  // namespace
}  // namespace posgeom::testing
