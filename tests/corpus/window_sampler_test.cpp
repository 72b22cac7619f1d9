#include "posgeom/corpus/window_sampler.h"

#include <numeric>
#include <set>

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Documents of consecutive ids, delivered in blocks of `block` tokens.
class FakeStream final : public corpus::TokenStream {
 public:
  FakeStream(std::vector<int> lengths, std::size_t block) : block_(block) {
    int32_t next = 0;
    for (std::size_t d = 0; d < lengths.size(); ++d) {
      std::vector<int32_t> ids(static_cast<std::size_t>(lengths[d]));
      std::iota(ids.begin(), ids.end(), next);
      next += lengths[d];
      docs_.push_back({std::move(ids), "doc" + std::to_string(d)});
    }
  }
  std::optional<corpus::TokenBlock> next() override {
    while (doc_ < docs_.size() && pos_ >= docs_[doc_].first.size() && !(pos_ == 0 && docs_[doc_].first.empty())) {
      ++doc_;
      pos_ = 0;
    }
    if (doc_ >= docs_.size()) return std::nullopt;
    const auto& ids = docs_[doc_].first;
    corpus::TokenBlock b;
    b.label = docs_[doc_].second;
    b.document_start = pos_ == 0;
    const auto end = std::min(ids.size(), pos_ + block_);
    b.ids.assign(ids.begin() + static_cast<std::ptrdiff_t>(pos_), ids.begin() + static_cast<std::ptrdiff_t>(end));
    b.document_end = end == ids.size();
    tokens_ += static_cast<int64_t>(b.ids.size());
    pos_ = end;
    if (ids.empty()) ++doc_;
    return b;
  }
  corpus::TokenStreamStats stats() const override {
    return {tokens_, static_cast<int64_t>(std::min(doc_ + 1, docs_.size())), 0, 0, 0, 0};
  }
  std::string name() const override { return "fake"; }

 private:
  std::vector<std::pair<std::vector<int32_t>, std::string>> docs_;
  std::size_t block_;
  std::size_t doc_ = 0, pos_ = 0;
  int64_t tokens_ = 0;
};

std::vector<corpus::Window> all(corpus::WindowSampler& s) {
  std::vector<corpus::Window> out;
  while (auto w = s.next()) out.push_back(*w);
  return out;
}

TEST(WindowSampler, SequentialNonOverlappingWithinDocuments) {
  FakeStream stream({10, 7}, 3);
  corpus::WindowOptions o;
  o.seq_len = 4;
  corpus::WindowSampler sampler(stream, o);
  const auto w = all(sampler);
  ASSERT_EQ(w.size(), 3u);  // doc0: [0..3], [4..7] (8, 9 left over); doc1: [10..13]
  EXPECT_EQ(w[0].ids, (std::vector<int32_t>{0, 1, 2, 3}));
  EXPECT_EQ(w[1].ids, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(w[2].ids, (std::vector<int32_t>{10, 11, 12, 13}));
  EXPECT_EQ(w[2].label, "doc1");
  EXPECT_EQ(sampler.stats().documents_seen, 2);
  EXPECT_EQ(sampler.stats().tokens_read, 17);
}

TEST(WindowSampler, QuotaPerDocumentBalancesLabels) {
  FakeStream stream({40, 40, 40}, 7);
  corpus::WindowOptions o;
  o.seq_len = 4;
  o.max_per_document = 2;
  corpus::WindowSampler sampler(stream, o);
  const auto w = all(sampler);
  ASSERT_EQ(w.size(), 6u);
  EXPECT_EQ(w[1].ids.front(), 4);
  EXPECT_EQ(w[2].ids.front(), 40);  // the next document starts fresh
  EXPECT_EQ(w[2].label, "doc1");
  EXPECT_EQ(w[5].label, "doc2");
  o.cross_documents = true;
  EXPECT_THROW(corpus::WindowSampler(stream, o), InputError);
}

TEST(WindowSampler, CrossingDocumentsKeepsTheStartingLabel) {
  FakeStream stream({6, 6}, 5);
  corpus::WindowOptions o;
  o.seq_len = 4;
  o.cross_documents = true;
  corpus::WindowSampler sampler(stream, o);
  const auto w = all(sampler);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[1].ids, (std::vector<int32_t>{4, 5, 6, 7}));
  EXPECT_EQ(w[1].label, "doc0");
  EXPECT_EQ(w[2].label, "doc1");
}

TEST(WindowSampler, FramingSurroundsEachWindow) {
  FakeStream stream({10}, 10);
  corpus::WindowOptions o;
  o.seq_len = 5;
  o.framing = {{100}, {101}};
  corpus::WindowSampler sampler(stream, o);
  const auto w = all(sampler);
  ASSERT_EQ(w.size(), 3u);
  EXPECT_EQ(w[0].ids, (std::vector<int32_t>{100, 0, 1, 2, 101}));
  EXPECT_EQ(w[1].ids, (std::vector<int32_t>{100, 3, 4, 5, 101}));
}

TEST(WindowSampler, RandomOffsetsAreSeededGapsInsideTheDocument) {
  auto run = [](uint64_t seed) {
    FakeStream stream({1000}, 64);
    corpus::WindowOptions o;
    o.seq_len = 8;
    o.random_offsets = true;
    o.seed = seed;
    corpus::WindowSampler sampler(stream, o);
    return all(sampler);
  };
  const auto a = run(1), b = run(1), c = run(2);
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i].ids, b[i].ids);
  EXPECT_NE(a[0].ids, c[0].ids);
  std::set<int32_t> starts;
  for (std::size_t i = 0; i < a.size(); ++i) {
    EXPECT_EQ(a[i].ids.back() - a[i].ids.front(), 7);  // contiguous
    if (i > 0) {
      EXPECT_GE(a[i].ids.front(), a[i - 1].ids.back() + 1);
    }
    starts.insert(a[i].ids.front() % 8);
  }
  EXPECT_GT(starts.size(), 3u);  // offsets are not all aligned
  EXPECT_GT(a.size(), 50u);
}

TEST(WindowSampler, ShardsPartitionTheWindowsAndMaxWindowsIsGlobal) {
  std::vector<int32_t> firsts;
  for (int64_t shard = 0; shard < 3; ++shard) {
    FakeStream stream({100}, 7);
    corpus::WindowOptions o;
    o.seq_len = 5;
    o.max_windows = 10;
    o.shard_index = shard;
    o.shard_count = 3;
    corpus::WindowSampler sampler(stream, o);
    for (const auto& w : all(sampler)) {
      EXPECT_EQ(w.index % 3, shard);
      firsts.push_back(w.ids.front());
    }
  }
  std::sort(firsts.begin(), firsts.end());
  std::vector<int32_t> expected;
  for (int i = 0; i < 10; ++i) expected.push_back(5 * i);
  EXPECT_EQ(firsts, expected);
}

TEST(WindowSampler, TooShortCorpusGivesBothCounts) {
  FakeStream stream({3}, 3);
  corpus::WindowOptions o;
  o.seq_len = 8;
  corpus::WindowSampler sampler(stream, o);
  try {
    sampler.next();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("corpus has 3 tokens, fewer than one window of 8"), std::string::npos) << e.what();
  }
}

TEST(WindowSampler, ShortDocumentsSuggestCrossingBoundaries) {
  FakeStream stream({3, 4, 2}, 3);
  corpus::WindowOptions o;
  o.seq_len = 5;
  corpus::WindowSampler sampler(stream, o);
  try {
    sampler.next();
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("longest 4"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("--cross-documents"), std::string::npos) << e.what();
  }
}

TEST(WindowSampler, OneTokenWindowsAndBadOptions) {
  FakeStream stream({1}, 1);
  corpus::WindowOptions o;
  o.seq_len = 1;
  corpus::WindowSampler sampler(stream, o);
  EXPECT_EQ(all(sampler).size(), 1u);
  o.seq_len = 2;
  o.framing = {{1}, {2}};
  EXPECT_THROW(corpus::WindowSampler(stream, o), InputError);
  o.framing = {};
  o.shard_index = 3;
  o.shard_count = 2;
  EXPECT_THROW(corpus::WindowSampler(stream, o), InputError);
}

}  // namespace
}  // namespace posgeom::testing
