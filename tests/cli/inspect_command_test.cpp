#include <nlohmann/json.hpp>

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

}  // namespace
}  // namespace posgeom::testing
