#include "posgeom/anova/state_merge.h"

#include "anova_fixtures.h"
#include "posgeom/base/error.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Shard i of n of one run over `windows` windows of 6 positions, width 3.
anova::NamedState shard(int64_t index, int64_t count, int windows, bool complete = true, unsigned seed = 1) {
  anova::NamedState s;
  s.name = "s" + std::to_string(index) + "of" + std::to_string(count) + (complete ? "" : "-stopped");
  s.state.settings = {{"seq_len", 6},
                      {"model", "/some/path/" + std::to_string(seed)},  // paths are not identity
                      {"model_fingerprint", "abc"},
                      {"corpus_fingerprint", "def"},
                      {"shard", std::to_string(index) + "/" + std::to_string(count)},
                      {"data", {{"windows", windows}, {"complete", complete}}}};
  s.state.windows = windows;
  s.state.layers.push_back(directStatistics(randomSequences(windows, 6, 3, seed + static_cast<unsigned>(index)), 1));
  return s;
}

// The InputError's message ("" when the merge went through).
std::string mergeError(const std::vector<anova::NamedState>& states, bool partial = false) {
  try {
    anova::mergeStates(states, {}, partial);
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

TEST(StateMerge, EveryShardOnceMergesAndRecordsItsCoverage) {
  const auto merged = anova::mergeStates({shard(1, 3, 4), shard(0, 3, 5), shard(2, 3, 2)}, {});
  EXPECT_EQ(merged.windows, 11);
  EXPECT_EQ(merged.layers[0].sequences, 11);
  const auto c = anova::coverageOf(merged);
  EXPECT_EQ(c.shard_count, 3);
  EXPECT_EQ(c.shards, (std::vector<int64_t>{0, 1, 2}));
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(merged.settings["data"]["complete"], true);
  EXPECT_FALSE(merged.settings["data"].contains("partial"));
  EXPECT_EQ(merged.settings["coverage"]["states"].size(), 3u);
  EXPECT_FALSE(merged.settings.contains("shard"));
}

TEST(StateMerge, TheSameShardTwiceIsRefusedNamingBothFiles) {
  const auto e = mergeError({shard(0, 2, 4), shard(1, 2, 4), shard(0, 2, 4)});
  EXPECT_NE(e.find("s0of2: holds shard 0/2 again: s0of2 holds it already"), std::string::npos) << e;
  // Not even with --partial: a window counted twice is never what was meant.
  EXPECT_NE(mergeError({shard(0, 2, 4), shard(0, 2, 4)}, true), "");
}

TEST(StateMerge, AWholeRunAndOneOfItsShardsOverlap) {
  const auto e = mergeError({shard(0, 1, 8), shard(1, 2, 4)});
  EXPECT_NE(e.find("s1of2: holds shard 1/2, of another split than s0of1 (0/1): their windows overlap"), std::string::npos)
      << e;
}

TEST(StateMerge, AStoppedStateIsRefusedUnlessPartial) {
  const auto e = mergeError({shard(0, 2, 4), shard(1, 2, 2, false)});
  EXPECT_NE(e.find("s1of2-stopped: is the state of a stopped pass (2 windows)"), std::string::npos) << e;
  EXPECT_NE(e.find("--partial"), std::string::npos) << e;
  const auto merged = anova::mergeStates({shard(0, 2, 4), shard(1, 2, 2, false)}, {}, true);
  EXPECT_EQ(merged.windows, 6);
  EXPECT_EQ(merged.settings["data"]["partial"], true);
  EXPECT_EQ(merged.settings["coverage"]["complete"], false);
  EXPECT_EQ(merged.settings["data"]["complete"], false);
}

TEST(StateMerge, MissingShardsAreRefusedUnlessPartialAndThenRecorded) {
  const auto e = mergeError({shard(0, 4, 4), shard(2, 4, 4)});
  EXPECT_NE(e.find("merge: shard 1,3/4 missing (the states hold 0,2/4)"), std::string::npos) << e;
  const auto merged = anova::mergeStates({shard(0, 4, 4), shard(2, 4, 4)}, {}, true);
  EXPECT_EQ(merged.settings["coverage"]["missing"], (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(merged.settings["data"]["partial"], true);
  // A partial merge's shards merge on with the rest, and then nothing is missing.
  anova::NamedState first{"partial", merged};
  const auto whole = anova::mergeStates({first, shard(1, 4, 3), shard(3, 4, 3)}, {});
  EXPECT_EQ(whole.windows, 14);
  EXPECT_EQ(whole.settings["data"]["complete"], true);
}

TEST(StateMerge, OtherSettingsModelsOrCorporaAreRefusedButOtherPathsAreNot) {
  auto other = shard(1, 2, 4, true, /*seed=*/7);  // another model path: the same content
  EXPECT_EQ(mergeError({shard(0, 2, 4), other}), "");
  other.state.settings["seq_len"] = 7;
  EXPECT_NE(mergeError({shard(0, 2, 4), other}).find("comes from another run than s0of2: seq_len (s0of2: 6, s1of2: 7)"),
            std::string::npos);
  auto swapped = shard(1, 2, 4);
  swapped.state.settings["model_fingerprint"] = "xyz";
  EXPECT_NE(mergeError({shard(0, 2, 4), swapped}).find("another model (its config or weights differ)"), std::string::npos);
  auto corpus = shard(1, 2, 4);
  corpus.state.settings["corpus_fingerprint"] = "xyz";
  EXPECT_NE(mergeError({shard(0, 2, 4), corpus}).find("another corpus"), std::string::npos);
}

TEST(StateMerge, AStateWithoutShardOrDataIsOneWholeRun) {
  anova::AnalysisState activations;  // analyze --activations writes neither
  const auto c = anova::coverageOf(activations);
  EXPECT_EQ(c.shard_count, 1);
  EXPECT_EQ(c.shards, (std::vector<int64_t>{0}));
  EXPECT_TRUE(c.complete);
  EXPECT_EQ(c.str(), "0/1");
}

TEST(StateMerge, SettingsDifferenceIgnoresWhatAStateCovers) {
  const nlohmann::json a = {{"seq_len", 6}, {"data", {{"windows", 3}}}, {"timings", 1}, {"corpus", "a.txt"}};
  const nlohmann::json b = {{"seq_len", 6}, {"data", {{"windows", 5}}}, {"timings", 2}, {"corpus", "./a.txt"}};
  EXPECT_EQ(anova::settingsDifference(a, b, "saved", "now"), "");
  const nlohmann::json c = {{"seq_len", 6}, {"dtype", "bfloat16"}};
  EXPECT_EQ(anova::settingsDifference(a, c, "saved", "now"), "dtype (saved none, now \"bfloat16\")");
}

}  // namespace
}  // namespace posgeom::testing
