#include "head_maps.h"

#include "test_support.h"

namespace posgeom::testing {
namespace {

// Head h's query map is rows [h dh, (h + 1) dh) of the stored weight; a missing bias is zero.
TEST(HeadMaps, EachHeadsRowsAreItsMap) {
  const auto q = at::randn({6, 5}), k = at::randn({6, 5}), qb = at::randn({6});
  const auto maps = model::arch::perHeadMaps(q, qb, k, {}, 3, 2);
  EXPECT_EQ(maps.wq.sizes().vec(), (std::vector<int64_t>{3, 2, 5}));
  EXPECT_TRUE(at::equal(maps.wq[1], q.narrow(0, 2, 2)));
  EXPECT_TRUE(at::equal(maps.wk[2], k.narrow(0, 4, 2)));
  EXPECT_TRUE(at::equal(maps.bq[2], qb.narrow(0, 4, 2)));
  EXPECT_EQ(maps.bk.abs().sum().item<double>(), 0.0);
  EXPECT_EQ(maps.bk.sizes().vec(), (std::vector<int64_t>{3, 2}));
}

// Grouped heads: four query heads in two groups read key maps 0, 0, 1, 1 (and their biases).
TEST(HeadMaps, GroupedHeadsRepeatEachKeyMapForItsQueries) {
  const auto q = at::randn({8, 5}), k = at::randn({4, 5}), kb = at::randn({4});
  const auto maps = model::arch::perHeadMaps(q, {}, k, kb, 4, 2, 2);
  EXPECT_EQ(maps.wk.sizes().vec(), (std::vector<int64_t>{4, 2, 5}));
  for (int64_t h = 0; h < 4; ++h) {
    EXPECT_TRUE(at::equal(maps.wk[h], k.narrow(0, 2 * (h / 2), 2))) << h;
    EXPECT_TRUE(at::equal(maps.bk[h], kb.narrow(0, 2 * (h / 2), 2))) << h;
  }
  EXPECT_TRUE(at::equal(maps.wq[3], q.narrow(0, 6, 2)));
}

}  // namespace
}  // namespace posgeom::testing
