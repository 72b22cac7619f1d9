#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(CheckCommand, ExitCodesSayWhetherSomethingMoved) {
  ScratchDir s;
  writeFile(s / "summary.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0}]})");
  writeFile(s / "same.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0}]})");
  writeFile(s / "moved.json", R"({"layers": [{"layer": 0, "stable_rank": 4.0}]})");
  EXPECT_EQ(runPosgeom({"check", s.path().string(), "--reference", (s / "same.json").string()}).exit_code, 0);
  const auto moved = runPosgeom({"check", (s / "summary.json").string(), "--reference", (s / "moved.json").string()});
  EXPECT_EQ(moved.exit_code, 1);
  EXPECT_NE(moved.out.find("MOVED"), std::string::npos);
  EXPECT_EQ(runPosgeom({"check", (s / "summary.json").string(), "--reference", (s / "moved.json").string(),
                        "--tolerance", "stable_rank=0.5"})
                .exit_code,
            0);
  EXPECT_EQ(runPosgeom({"check", s.path().string(), "--reference", (s / "missing.json").string()}).exit_code, 2);
  EXPECT_EQ(runPosgeom({"check", s.path().string(), "--reference", (s / "same.json").string(), "--tolerance", "x"})
                .exit_code,
            2);
}

// A real pretrained model's numbers pinned, as a user pins theirs: all-MiniLM-L6-v2
// (tools/real-models) on 32 windows of 128 tokens of the wikitext excerpt, every layer's
// ScreeNOT rank, stable rank, relative norm, low-frequency energy and explained ratio and
// every head's class and ETC, within 1e-4 (other CPUs' float32 kernels round otherwise).
// The reference is posgeom's own output on this machine: a regression pin; the model's
// parity with transformers is the golden test's (bert_test.cpp).
TEST(CheckCommand, ARealModelsNumbersArePinned) {
  POSGEOM_REQUIRE_REAL_MODEL("all-minilm-l6-v2");
  POSGEOM_REQUIRE_SHARED("data/corpora/wikitext-excerpt.txt");
  ScratchDir s;
  const auto analyzed = runPosgeom({"-q", "analyze", "--model", realModelDir("all-minilm-l6-v2").string(), "--corpus",
                                    (sharedDir() / "data/corpora/wikitext-excerpt.txt").string(), "--num-seqs", "32",
                                    "--seq-len", "128", "--heads", "--out", (s / "report").string()});
  ASSERT_EQ(analyzed.exit_code, 0) << analyzed.err;
  const auto reference = std::filesystem::path(POSGEOM_SOURCE_DIR) / "tests/fixtures/real/all-minilm-l6-v2.reference.json";
  const auto checked = runPosgeom({"check", (s / "report").string(), "--reference", reference.string(), "--rtol", "1e-4",
                                   "--atol", "1e-6"});
  EXPECT_EQ(checked.exit_code, 0) << checked.out;
  // 258 numbers and 72 head classes and flags.
  EXPECT_NE(checked.out.find("330 of 330 values within tolerance"), std::string::npos) << checked.out;
  // The pin holds the numbers: one moved is caught.
  auto moved = readFile(reference);
  const std::string key = "\"relative_norm\": ";
  const auto at = moved.find(key) + key.size();
  moved.replace(at, moved.find(',', at) - at, "0.5");
  writeFile(s / "moved.json", moved);
  EXPECT_EQ(runPosgeom({"check", (s / "report").string(), "--reference", (s / "moved.json").string(), "--rtol", "1e-4"})
                .exit_code,
            1);
  // So does a head whose class changed.
  auto reclassed = readFile(reference);
  const std::string local = "\"class\": \"local\"";
  ASSERT_NE(reclassed.find(local), std::string::npos);
  reclassed.replace(reclassed.find(local), local.size(), "\"class\": \"uniform\"");
  writeFile(s / "reclassed.json", reclassed);
  const auto reclassed_check = runPosgeom({"check", (s / "report").string(), "--reference", (s / "reclassed.json").string(),
                                           "--rtol", "1e-4", "--atol", "1e-6"});
  EXPECT_EQ(reclassed_check.exit_code, 1) << reclassed_check.out;
  EXPECT_NE(reclassed_check.out.find(".class"), std::string::npos) << reclassed_check.out;
}

// Malformed references and tolerances exit 2 with one line naming the file or option.
TEST(CheckCommand, MalformedReferencesExitTwo) {
  ScratchDir s;
  writeFile(s / "summary.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0}]})");
  writeFile(s / "array.json", "[1, 2]");
  writeFile(s / "string_tol.json", R"({"tolerances": {"stable_rank": {"rtol": "0.1"}}, "layers": [{"layer": 0, "stable_rank": 3.0}]})");
  writeFile(s / "ok.json", R"({"layers": [{"layer": 0, "stable_rank": 3.0}]})");
  for (const auto& [args, message] : std::vector<std::pair<std::vector<std::string>, std::string>>{
           {{"--reference", (s / "array.json").string()}, "array.json: is an array, not a JSON object"},
           {{"--reference", (s / "string_tol.json").string()}, "string_tol.json: tolerances.stable_rank.rtol must be a number >= 0"},
           {{"--reference", (s / "ok.json").string(), "--rtol", "-1"}, "--rtol/--atol: tolerances must be >= 0"}}) {
    std::vector<std::string> command{"check", (s / "summary.json").string()};
    command.insert(command.end(), args.begin(), args.end());
    const auto r = runPosgeom(command);
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find(message), std::string::npos) << r.err;
  }
}

}  // namespace
}  // namespace posgeom::testing
