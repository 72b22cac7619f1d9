#include "posgeom/io/safetensors.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

float maxAbsDiff(const io::TensorView& a, const io::TensorView& b) {
  const auto* x = reinterpret_cast<const float*>(a.data);
  const auto* y = reinterpret_cast<const float*>(b.data);
  float worst = 0;
  for (int64_t i = 0; i < a.numel(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

TEST(ForwardCommand, CausalFlagReproducesTheCausalBertGolden) {
  POSGEOM_REQUIRE_SHARED("fixtures/golden/tiny-bert-causal.safetensors");
  ScratchDir s;
  const auto golden_path = sharedDir() / "fixtures/golden/tiny-bert-causal.safetensors";
  const auto r = runPosgeom({"forward", "--model", (sharedDir() / "fixtures/models/tiny-bert").string(), "--ids",
                             golden_path.string(), "--out", (s / "o.safetensors").string(), "--causal"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto out = io::SafetensorsFile::open(s / "o.safetensors");
  const auto golden = io::SafetensorsFile::open(golden_path);
  for (const char* name : {"hidden.0", "hidden.1", "hidden.2", "hidden.3"})
    EXPECT_LT(maxAbsDiff(out.get(name), golden.get(name)), 1e-4) << name;
  EXPECT_EQ(out.find("logits"), nullptr);  // tiny-bert ships no MLM head
}

TEST(ForwardCommand, UnknownDtypeIsAUsageError) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  ScratchDir s;
  const auto r = runPosgeom({"forward", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--ids",
                             (sharedDir() / "fixtures/golden/tiny-gpt2.safetensors").string(), "--out",
                             (s / "o.safetensors").string(), "--dtype", "int4"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--dtype: 'int4'"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace posgeom::testing
