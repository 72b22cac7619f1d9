#include "posgeom/corpus/token_stream.h"

#include "posgeom/corpus/corpus_source.h"
#include "posgeom/corpus/window_sampler.h"

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

// The induction probe's windows: three copies of one random stretch, a new stretch per
// window, cut whole by the window sampler.
TEST(TokenStream, RepeatedRandomWindowsAreThreeCopies) {
  for (const int64_t t : {12, 13, 14}) {
    const int64_t period = corpus::repeatPeriod(t);
    auto stream = corpus::repeatedRandomTokens(1000, 3, period);
    corpus::WindowOptions w;
    w.seq_len = t;
    w.max_windows = 3;
    corpus::WindowSampler sampler(*stream, w);
    std::vector<std::vector<int32_t>> windows;
    while (auto window = sampler.next()) windows.push_back(window->ids);
    ASSERT_EQ(windows.size(), 3u) << t;
    for (const auto& ids : windows) {
      ASSERT_EQ(static_cast<int64_t>(ids.size()), t);
      for (int64_t i = period; i < t; ++i) EXPECT_EQ(ids[static_cast<std::size_t>(i)], ids[static_cast<std::size_t>(i - period)]) << t;
      // Within one stretch the ids are drawn, not repeated (1000 ids, 5 draws).
      EXPECT_NE(ids[0], ids[1]);
    }
    EXPECT_NE(windows[0], windows[1]);
  }
  EXPECT_EQ(corpus::repeatPeriod(12), 4);
  EXPECT_EQ(corpus::repeatPeriod(13), 5);  // 5 + 5 + 3
}

}  // namespace
}  // namespace posgeom::testing
