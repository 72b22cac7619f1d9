#include "posgeom/pass/window_batches.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

corpus::WindowOptions windows(int64_t count) {
  corpus::WindowOptions w;
  w.seq_len = 8;
  w.max_windows = count;
  return w;
}

TEST(WindowBatches, GiveTheSamplersWindowsInBatchesAndEndWithAShortOne) {
  auto reference_stream = corpus::randomTokens(100, 7);
  corpus::WindowSampler reference(*reference_stream, windows(10));
  auto stream = corpus::randomTokens(100, 7);
  corpus::WindowSampler sampler(*stream, windows(10));
  pass::WindowBatches batches(sampler, *stream, 4);
  std::vector<int64_t> sizes;
  for (;;) {
    const auto batch = batches.next();
    sizes.push_back(batch.size());
    if (batch.size() == 0) break;
    ASSERT_EQ(batch.ids.size(), static_cast<std::size_t>(batch.size() * 8));
    for (int64_t i = 0; i < batch.size(); ++i) {
      const auto expected = reference.next();
      ASSERT_TRUE(expected.has_value());
      EXPECT_EQ(batch.indices[static_cast<std::size_t>(i)], expected->index);
      EXPECT_TRUE(std::equal(expected->ids.begin(), expected->ids.end(), batch.ids.begin() + i * 8));
    }
    // The counts are those of the batch handed out, not of whatever is being read ahead.
    EXPECT_EQ(batch.windows_read.windows_kept, reference.stats().windows_kept);
  }
  EXPECT_EQ(sizes, (std::vector<int64_t>{4, 4, 2, 0}));  // the short batch ends the corpus: empty ones after it
  EXPECT_EQ(batches.next().size(), 0);
}

// A full batch may be the last: finished() looks at the batch read ahead, which next()
// then hands out unchanged.
TEST(WindowBatches, FinishedSaysWhetherAWindowIsLeftAfterAFullBatch) {
  auto stream = corpus::randomTokens(100, 7);
  corpus::WindowSampler sampler(*stream, windows(8));
  pass::WindowBatches batches(sampler, *stream, 4);
  EXPECT_FALSE(batches.finished());  // before any batch: eight windows ahead
  const auto first = batches.next();
  EXPECT_EQ(first.indices, (std::vector<int64_t>{0, 1, 2, 3}));
  EXPECT_FALSE(batches.finished());
  EXPECT_FALSE(batches.finished());  // asking twice reads nothing more
  const auto second = batches.next();
  EXPECT_EQ(second.indices, (std::vector<int64_t>{4, 5, 6, 7}));
  EXPECT_FALSE(batches.exhausted());  // a full batch: exhausted() cannot tell
  EXPECT_TRUE(batches.finished());
  EXPECT_EQ(batches.next().size(), 0);
  EXPECT_TRUE(batches.finished());
}

TEST(WindowBatches, ReadingErrorsSurfaceWhenTheirBatchIsAskedFor) {
  ScratchDir s;
  writeFile(s / "ids.bin", std::string(10, '\1'));  // five uint16 ids: not one window of 8
  auto stream = corpus::openPretokenized((s / "ids.bin").string(), "uint16", 1000);
  corpus::WindowSampler sampler(*stream, windows(0));
  pass::WindowBatches batches(sampler, *stream, 2);
  EXPECT_THROW(batches.next(), InputError);
}

}  // namespace
}  // namespace posgeom::testing
