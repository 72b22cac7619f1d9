#include "posgeom/pass/rank_agreement.h"

#include <algorithm>

#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"

namespace posgeom::pass {

Shard rankShard(const Shard& asked, const runtime::RankGroup& group) {
  return {asked.index + asked.count * group.rank(), asked.count * group.world()};
}

void takeRankShard(PassPlan& plan, const runtime::RankGroup& group) {
  plan.shard = rankShard(plan.shard, group);
  plan.windows.shard_index = plan.shard.index;
  plan.windows.shard_count = plan.shard.count;
}

nlohmann::json distributedSettings(const runtime::RankGroup& group) {
  return {{"world_size", group.world()}, {"launcher", group.launch().launcher}, {"backend", group.backend()}};
}

void requireSameSettings(runtime::RankGroup& group, const nlohmann::json& settings) {
  const auto all = group.gatherAll(settings.dump());
  const auto root = nlohmann::json::parse(all[0]);
  for (std::size_t r = 1; r < all.size(); ++r) {
    const std::string rank = "rank " + std::to_string(r);
    const auto difference = anova::settingsDifference(root, nlohmann::json::parse(all[r]), "rank 0", rank);
    if (!difference.empty())
      throw InputError(rank, "runs with other settings than rank 0: " + difference + " (every rank must be given the same run)");
  }
}

void requireSameWorld(const anova::AnalysisState& saved, const runtime::RankGroup* group, const std::string& where) {
  const auto it = saved.settings.find("distributed");
  const int64_t saved_world = it != saved.settings.end() && it->is_object() ? it->value("world_size", int64_t{1}) : 1;
  const int64_t world = group ? group->world() : 1;
  if (saved_world == world) return;
  const auto ranks = [](int64_t n) { return n == 1 ? std::string("one process") : std::to_string(n) + " ranks"; };
  throw InputError(where, "was saved by a run of " + ranks(saved_world) + ", and this launch is " + ranks(world) +
                              ": resume it with " + ranks(saved_world) +
                              " (each rank's windows and sums are split by the world size)");
}

nlohmann::json combinedData(const std::vector<std::string>& per_rank, bool complete) {
  nlohmann::json ranks = nlohmann::json::array();
  int64_t windows = 0, tokens = 0, documents = 0, replaced = 0, skipped = 0;
  for (const auto& text : per_rank) {
    auto d = nlohmann::json::parse(text);
    windows += d.value("windows", int64_t{0});
    tokens = std::max(tokens, d.value("tokens_read", int64_t{0}));
    documents = std::max(documents, d.value("documents", int64_t{0}));
    replaced = std::max(replaced, d.value("invalid_utf8_replaced", int64_t{0}));
    skipped = std::max(skipped, d.value("skipped_rows", int64_t{0}));
    ranks.push_back({{"windows", d["windows"]}, {"token_hash", d["token_hash"]}});
  }
  return {{"windows", windows},
          {"tokens_read", tokens},
          {"documents", documents},
          {"invalid_utf8_replaced", replaced},
          {"skipped_rows", skipped},
          {"complete", complete},
          {"ranks", ranks}};
}

}  // namespace posgeom::pass
