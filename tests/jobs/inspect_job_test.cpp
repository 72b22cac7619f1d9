#include "posgeom/jobs/inspect_job.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(Inspect, DescribesTheShardedBFloat16Llama) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-llama");
  const auto info = jobs::inspectModel((sharedDir() / "fixtures/models/tiny-llama").string());
  EXPECT_EQ(info["family"], "Llama");
  EXPECT_EQ(info["kv_heads"], 4);
  EXPECT_EQ(info["positional_scheme"], "RoPE");
  EXPECT_EQ(info["lm_head"], "separate");
  EXPECT_EQ(info["weight_files"].size(), 2u);
  // embed + lm_head + 3 x (2 norms + q,o [64x64] + k,v [32x64] + 3 MLP [172x64]) + final norm
  const int64_t per_layer = 2 * 64 + 2 * 64 * 64 + 2 * 32 * 64 + 3 * 172 * 64;
  EXPECT_EQ(info["parameters"], 2 * 1000 * 64 + 3 * per_layer + 64);
  EXPECT_EQ(info["stored_dtypes"]["BF16"], info["parameters"]);
}

TEST(Inspect, TextNamesTheEssentials) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-bloom");
  const auto text = jobs::formatInspection(jobs::inspectModel((sharedDir() / "fixtures/models/tiny-bloom").string()));
  EXPECT_NE(text.find("BLOOM model"), std::string::npos);
  EXPECT_NE(text.find("ALiBi, no fixed maximum"), std::string::npos);
  EXPECT_NE(text.find("6 (6 key/value, head dim 12)"), std::string::npos);
}

}  // namespace
}  // namespace posgeom::testing
