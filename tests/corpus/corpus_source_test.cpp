#include "posgeom/corpus/corpus_source.h"

#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

TEST(CorpusSource, DispatchesOnTheKindOfCorpus) {
  ScratchDir s;
  EXPECT_TRUE(corpus::isPretokenized("x/tokens.bin"));
  EXPECT_TRUE(corpus::isPretokenized("a.npy"));
  EXPECT_FALSE(corpus::isPretokenized("a.txt"));
  corpus::CorpusOptions o;
  o.path = "random";
  EXPECT_EQ(corpus::openCorpus(o, nullptr, 10)->name(), "random");
  o.path = "repeated-random";
  EXPECT_THROW(corpus::openCorpus(o, nullptr, 10), InputError);  // no period
  o.repeat_period = 4;
  EXPECT_EQ(corpus::openCorpus(o, nullptr, 10)->next()->ids.size(), 12u);
  EXPECT_TRUE(corpus::isGenerated("random"));
  EXPECT_TRUE(corpus::isGenerated("repeated-random"));
  EXPECT_FALSE(corpus::isGenerated("random.txt"));
  writeFile(s / "t.bin", std::string("\x01\x00", 2));
  o.path = (s / "t.bin").string();
  EXPECT_EQ(corpus::openCorpus(o, nullptr, 10)->next()->ids, (std::vector<int32_t>{1}));
}

TEST(CorpusSource, TextNeedsATokenizer) {
  ScratchDir s;
  writeFile(s / "t.txt", "hello");
  corpus::CorpusOptions o;
  o.path = (s / "t.txt").string();
  EXPECT_THROW(corpus::openCorpus(o, nullptr, 10), InputError);
  o.path = "";
  EXPECT_THROW(corpus::openCorpus(o, nullptr, 10), InputError);
}

}  // namespace
}  // namespace posgeom::testing
