#pragma once
// What `analyze` does differently as one rank of several: the windows it takes, the
// settings every rank must share, the saved state's record of the ranks, and the checks
// before a distributed run resumes. Torch-free.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/anova/state_file.h"
#include "posgeom/pass/plan.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::pass {

// The shard a rank reads of the shard asked (--shard i/n, else 0/1): windows
// i + n * rank, every n * world-th, so the ranks together read exactly the shard asked.
Shard rankShard(const Shard& asked, const runtime::RankGroup& group);
void takeRankShard(PassPlan& plan, const runtime::RankGroup& group);

// settings["distributed"]: how many ranks, launched how, on which engine.
nlohmann::json distributedSettings(const runtime::RankGroup& group);

// Every rank's settings against rank 0's: the first rank whose run would compute something
// else (another corpus, model or option) is named in an InputError, on every rank alike.
void requireSameSettings(runtime::RankGroup& group, const nlohmann::json& settings);

// A saved state resumes only under the world size it was saved with (the ranks' windows
// and sums are split by it); a single process does not resume a distributed state, nor a
// distributed launch a single process's. InputError naming the state otherwise.
void requireSameWorld(const anova::AnalysisState& saved, const runtime::RankGroup* group, const std::string& where);

// data of a distributed state from each rank's own (JSON texts, by rank): the counts
// summed (windows) or as the furthest rank read them (each rank reads the whole corpus),
// and each rank's record under "ranks" for a resume.
nlohmann::json combinedData(const std::vector<std::string>& per_rank, bool complete);

}  // namespace posgeom::pass
