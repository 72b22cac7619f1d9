#include "posgeom/tokenize/pipeline_tokenizer.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {
using namespace posgeom::tokenize;

// A model that maps each piece to its length, so the pipeline's splitting is visible.
Pipeline lengthPipeline() {
  Pipeline p;
  p.pre_tokenizer = whitespaceSplitPreTokenizer();
  p.model = [](std::string_view piece, std::vector<int32_t>& out, EncodeStats&) {
    out.push_back(static_cast<int32_t>(piece.size()));
  };
  p.model_vocab_size = 100;
  return p;
}

TEST(PipelineTokenizer, AddedTokensWinLongestFirst) {
  auto p = lengthPipeline();
  p.added_tokens = {{"<s>", 900, true}, {"<sep>", 901, true}};
  const PipelineTokenizer t(std::move(p));
  EncodeStats stats;
  EXPECT_EQ(t.encode("ab<sep>cde <s>", stats), (std::vector<int32_t>{2, 901, 3, 900}));
  EXPECT_EQ(t.vocabSize(), 902);
}

TEST(PipelineTokenizer, NormalizerSeesDocumentStart) {
  auto p = lengthPipeline();
  p.normalizer = prependNormalizer("___");
  const PipelineTokenizer t(std::move(p));
  EncodeStats stats;
  EXPECT_EQ(t.encode("ab", stats), (std::vector<int32_t>{5}));
  EXPECT_EQ(t.encode("ab", stats, /*continuation=*/true), (std::vector<int32_t>{2}));
}

TEST(PipelineTokenizer, NonByteLevelReplacesInvalidUtf8) {
  const PipelineTokenizer t(lengthPipeline());
  EncodeStats stats;
  EXPECT_EQ(t.encode("a\xFF", stats), (std::vector<int32_t>{4}));  // 'a' + U+FFFD (3 bytes)
  EXPECT_EQ(stats.invalid_utf8_replaced, 1u);
}

}  // namespace
}  // namespace posgeom::testing
