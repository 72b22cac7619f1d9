#include "posgeom/corpus/token_stream.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(TokenStream, TextThroughATokenizerKeepsLabelsAndCounts) {
  POSGEOM_REQUIRE_SHARED("data/tokenizers/gpt2/vocab.json");
  ScratchDir s;
  writeFile(s / "a.txt", "Hello world");
  writeFile(s / "b.txt", "Hello");
  const auto tokenizer = tokenize::loadTokenizer(sharedDir() / "data/tokenizers/gpt2");
  auto stream = corpus::tokenizeDocuments(corpus::openDocuments(s.path().string(), {}), *tokenizer, "dir");
  auto first = stream->next();
  ASSERT_TRUE(first);
  EXPECT_EQ(first->ids, (std::vector<int32_t>{15496, 995}));
  EXPECT_EQ(first->label, "a.txt");
  auto second = stream->next();
  EXPECT_EQ(second->label, "b.txt");
  EXPECT_FALSE(stream->next());
  EXPECT_EQ(stream->stats().tokens, 3);
  EXPECT_EQ(stream->stats().documents, 2);
}

TEST(TokenStream, RandomTokensAreSeededAndInRange) {
  auto a = corpus::randomTokens(50, 7), b = corpus::randomTokens(50, 7), c = corpus::randomTokens(50, 8);
  const auto x = a->next()->ids, y = b->next()->ids, z = c->next()->ids;
  EXPECT_EQ(x, y);
  EXPECT_NE(x, z);
  EXPECT_EQ(*std::min_element(x.begin(), x.end()), 0);
  EXPECT_EQ(*std::max_element(x.begin(), x.end()), 49);
}

}  // namespace
}  // namespace posgeom::testing
