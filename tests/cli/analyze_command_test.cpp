#include <nlohmann/json.hpp>

#include "posgeom/io/json_file.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(AnalyzeCommand, ActivationsToAReport) {
  POSGEOM_REQUIRE_SHARED("fixtures/metrics/anova_hidden.safetensors");
  ScratchDir s;
  const auto r = runPosgeom({"analyze", "--activations", (sharedDir() / "fixtures/metrics/anova_hidden.safetensors").string(),
                             "--screenot-k", "10", "--out", (s / "r").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(io::readJsonFile(s / "r/summary.json")["layers"][0]["screenot_rank"], 6);
}

TEST(AnalyzeCommand, ScreeNotKTooLargeIsABadInput) {
  POSGEOM_REQUIRE_SHARED("fixtures/metrics/anova_hidden.safetensors");
  ScratchDir s;
  const auto r = runPosgeom({"analyze", "--activations", (sharedDir() / "fixtures/metrics/anova_hidden.safetensors").string(),
                             "--screenot-k", "40", "--out", (s / "r").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--screenot-k: 40 is too large"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(s / "r/summary.json"));
}

TEST(AnalyzeCommand, NeedsAModelOrActivations) {
  ScratchDir s;
  const auto r = runPosgeom({"analyze", "--out", (s / "r").string()});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give --model and --corpus, or --activations"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace posgeom::testing
