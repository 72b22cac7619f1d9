#include <nlohmann/json.hpp>

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TokenizeCommand, StandardInputToJsonOnStandardOutput) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  const auto r = runPosgeom({"tokenize", "--tokenizer", (sharedDir() / "data/tokenizers/gpt2").string(), "--input", "-"},
                            "Hello world");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out), nlohmann::json({15496, 995}));
}

TEST(TokenizeCommand, ModelDirectoryWithoutTokenizerFilesSaysWhatItLookedFor) {
  POSGEOM_REQUIRE_SHARED("fixtures/models/tiny-gpt2");
  const auto r = runPosgeom({"tokenize", "--model", (sharedDir() / "fixtures/models/tiny-gpt2").string(), "--input", "-"}, "x");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("no tokenizer found"), std::string::npos) << r.err;
}

TEST(TokenizeCommand, NeedsModelOrTokenizer) {
  EXPECT_EQ(runPosgeom({"tokenize", "--input", "-"}).exit_code, 2);
}

}  // namespace
}  // namespace posgeom::testing
