#include <nlohmann/json.hpp>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(BenchCommand, PrintsAndWritesTheNumbersOfATinyModel) {
  ScratchDir s;
  ASSERT_EQ(runPosgeom({"random-model", "--layers", "2", "--dim", "32", "--heads", "4", "--out", (s / "m").string()}).exit_code, 0);
  const auto r = runPosgeom({"bench", "--model", (s / "m").string(), "--seq-len", "16", "--batch-size", "2", "--rounds",
                             "1", "--out", (s / "b.json").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* printed : {"GFLOP/s", "forward", "analyze --heads", "peak RSS", "tokenizer"})
    EXPECT_NE(r.out.find(printed), std::string::npos) << printed << " in\n" << r.out;
  const auto json = nlohmann::json::parse(readFile(s / "b.json"));
  for (const char* key : {"gemm_gflops", "forward_tokens_per_s", "analyze_tokens_per_s", "analyze_heads_tokens_per_s",
                          "forward_gemm_share", "peak_rss_bytes"}) {
    ASSERT_TRUE(json.contains(key)) << key;
    EXPECT_GT(json[key].get<double>(), 0) << key;
  }
}

TEST(BenchCommand, AnUnknownShapeIsOneLineAndExitTwo) {
  ScratchDir s;
  const auto r = runPosgeom({"bench", "--shape", "gpt5", "--out", (s / "b.json").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--shape: 'gpt5' is not a benchmark shape"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(s / "b.json"));
}

}  // namespace
}  // namespace posgeom::testing
