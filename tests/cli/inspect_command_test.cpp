#include <nlohmann/json.hpp>

#include <cstdlib>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(InspectCommand, JsonOutputParses) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2-f16-prefixed");
  const auto r = runPosgeom({"inspect", "--json", "--model",
                             (sharedDir() / "fixtures/models/tiny-gpt2-f16-prefixed").string()});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto info = nlohmann::json::parse(r.out);
  EXPECT_EQ(info["model_type"], "gpt2");
  EXPECT_TRUE(info["stored_dtypes"].contains("F16"));
  EXPECT_EQ(info["lm_head"], "tied");
}

TEST(InspectCommand, HubNameMissingFromTheCacheSaysWhereItLooked) {
  ScratchDir s;
  setenv("HF_HUB_CACHE", s.path().c_str(), 1);
  const auto r = runPosgeom({"inspect", "--model", "openai-community/gpt2"});
  unsetenv("HF_HUB_CACHE");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("models--openai-community--gpt2"), std::string::npos) << r.err;
}

// Probe 3 case 124: only analyze had --revision, though the README gives it with --model.
TEST(InspectCommand, RevisionPicksTheHubSnapshotAsAnalyzeDoes) {
  ScratchDir s;
  const std::string main_commit(40, 'a'), other(40, 'b');
  std::filesystem::create_directories(s / "hub/models--org--m/snapshots");
  for (const auto& [commit, fixture] : {std::pair{main_commit, "hf-gpt2"}, std::pair{other, "hf-llama"}})
    std::filesystem::copy(hfFixtureDir(fixture), s / ("hub/models--org--m/snapshots/" + commit),
                          std::filesystem::copy_options::recursive);
  std::filesystem::create_directories(s / "hub/models--org--m/refs");
  writeFile(s / "hub/models--org--m/refs/main", main_commit);
  writeFile(s / "hub/models--org--m/refs/dev", other);
  setenv("HF_HUB_CACHE", (s / "hub").c_str(), 1);
  const auto at_main = runPosgeom({"inspect", "--json", "--model", "org/m"});
  const auto at_dev = runPosgeom({"inspect", "--json", "--model", "org/m", "--revision", "dev"});
  const auto at_prefix = runPosgeom({"inspect", "--json", "--model", "org/m", "--revision", other.substr(0, 7)});
  const auto missing = runPosgeom({"inspect", "--model", "org/m", "--revision", "nothere"});
  unsetenv("HF_HUB_CACHE");
  ASSERT_EQ(at_main.exit_code, 0) << at_main.err;
  EXPECT_EQ(nlohmann::json::parse(at_main.out)["model_type"], "gpt2");
  ASSERT_EQ(at_dev.exit_code, 0) << at_dev.err;
  EXPECT_EQ(nlohmann::json::parse(at_dev.out)["model_type"], "llama");
  ASSERT_EQ(at_prefix.exit_code, 0) << at_prefix.err;
  EXPECT_EQ(nlohmann::json::parse(at_prefix.out)["model_type"], "llama");
  EXPECT_EQ(missing.exit_code, 2);
}

}  // namespace
}  // namespace posgeom::testing
