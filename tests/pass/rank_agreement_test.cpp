#include "posgeom/pass/rank_agreement.h"

#include <gtest/gtest.h>

#include "posgeom/base/error.h"
#include "rank_threads.h"

namespace posgeom::pass {
namespace {

// The ranks' shards of a shard asked cover exactly its windows, each once.
TEST(RankAgreement, RankShardsSplitTheShardAsked) {
  const std::vector<int> worlds{2, 3};
  for (const pass::Shard asked : {pass::Shard{0, 1}, pass::Shard{1, 4}}) {
    for (const int world : worlds) {
      std::vector<int> owners(60, 0);
      const auto outcomes =
          testing::runRankThreads(world, testing::loopbackRendezvous(), std::chrono::seconds(20), [&](runtime::RankGroup& g) {
            const auto shard = rankShard(asked, g);
            EXPECT_EQ(shard.count, asked.count * world);
            for (int64_t w = 0; w < 60; ++w)
              if (w % shard.count == shard.index) ++owners[static_cast<std::size_t>(w)];
            // As a run does, the ranks part after a collective: one that tore its group
            // down at once could close a connection another rank was still making.
            EXPECT_EQ(g.sumAll({1}), std::vector<int64_t>{world});
          });
      for (const auto& o : outcomes) ASSERT_FALSE(o.failed) << o.message;
      for (int64_t w = 0; w < 60; ++w)
        EXPECT_EQ(owners[static_cast<std::size_t>(w)], w % asked.count == asked.index ? 1 : 0) << asked.str() << " window " << w;
    }
  }
}

TEST(RankAgreement, CombinedDataSumsWindowsAndKeepsEachRanksRecord) {
  const auto data = combinedData({R"({"windows": 5, "tokens_read": 900, "documents": 3, "token_hash": "aa",
                                      "invalid_utf8_replaced": 1, "skipped_rows": 0})",
                                  R"({"windows": 4, "tokens_read": 950, "documents": 4, "token_hash": "bb",
                                      "invalid_utf8_replaced": 1, "skipped_rows": 2})"},
                                 true);
  EXPECT_EQ(data["windows"], 9);
  EXPECT_EQ(data["tokens_read"], 950);  // every rank reads the whole corpus: the furthest
  EXPECT_EQ(data["documents"], 4);
  EXPECT_EQ(data["invalid_utf8_replaced"], 1);
  EXPECT_EQ(data["skipped_rows"], 2);
  EXPECT_EQ(data["complete"], true);
  EXPECT_EQ(data["ranks"][1]["token_hash"], "bb");
  EXPECT_EQ(data["ranks"][1]["windows"], 4);
  EXPECT_FALSE(data.contains("token_hash"));
}

TEST(RankAgreement, ResumeOnlyUnderTheWorldSizeSaved) {
  anova::AnalysisState single, distributed;
  distributed.settings["distributed"] = {{"world_size", 2}};
  EXPECT_NO_THROW(requireSameWorld(single, nullptr, "state"));
  try {
    requireSameWorld(distributed, nullptr, "state.safetensors");
    ADD_FAILURE() << "resumed a 2-rank state alone";
  } catch (const InputError& e) {
    EXPECT_EQ(std::string(e.what()),
              "state.safetensors: was saved by a run of 2 ranks, and this launch is one process: resume it with 2 ranks "
              "(each rank's windows and sums are split by the world size)");
  }
  std::vector<std::string> messages(2);
  testing::runRankThreads(2, testing::loopbackRendezvous(), std::chrono::seconds(20), [&](runtime::RankGroup& g) {
    EXPECT_NO_THROW(requireSameWorld(distributed, &g, "s"));
    try {
      requireSameWorld(single, &g, "s");
    } catch (const InputError& e) {
      messages[static_cast<std::size_t>(g.rank())] = e.what();
    }
  });
  EXPECT_EQ(messages[1].rfind("s: was saved by a run of one process, and this launch is 2 ranks", 0), 0u) << messages[1];
}

// Every rank hears which rank's settings differ from rank 0's, and how.
TEST(RankAgreement, RanksWithOtherSettingsAreNamedOnEveryRank) {
  std::vector<std::string> messages(3);
  testing::runRankThreads(3, testing::loopbackRendezvous(), std::chrono::seconds(20), [&](runtime::RankGroup& g) {
    nlohmann::json settings = {{"seq_len", g.rank() == 2 ? 64 : 32}, {"effective", {{"threads", g.rank()}}}};
    try {
      requireSameSettings(g, settings);
    } catch (const InputError& e) {
      messages[static_cast<std::size_t>(g.rank())] = e.what();
    }
  });
  for (const auto& m : messages)
    EXPECT_EQ(m, "rank 2: runs with other settings than rank 0: seq_len (rank 0 32, rank 2 64) (every rank must be given the same run)");
}

}  // namespace
}  // namespace posgeom::pass
