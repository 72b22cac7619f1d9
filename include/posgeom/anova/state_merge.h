#pragma once
// What a state covers (which shards of which split, whether its pass finished) and the
// merge of states into one, refusing anything that would count a window twice or mix
// runs. Torch-free.
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "posgeom/anova/state_file.h"

namespace posgeom::anova {

// The first setting in which two runs' numbers differ ("" when none), as
// "seq_len (<a_label> 16, <b_label> 32)". Paths are not identity: the model and the corpus
// are compared by their content fingerprints, never by "model" or "corpus"; "data",
// "timings", "shard", "coverage" and "effective" say how much a state holds and what
// posgeom chose for the machine, not what it computes.
std::string settingsDifference(const nlohmann::json& a, const nlohmann::json& b, const std::string& a_label,
                               const std::string& b_label);

struct Coverage {
  int64_t shard_count = 1;           // the split: --shard i/n
  std::vector<int64_t> shards{0};    // the shards of it held, ascending
  bool complete = true;              // every shard held finished its pass
  std::string str() const;           // "0/2", "0,2/4"
};
// From settings["coverage"] (a merged state), else settings["shard"] and
// settings["data"]["complete"] (a run's state); a state with neither is one whole run.
Coverage coverageOf(const AnalysisState& state);

struct NamedState {
  std::string name;  // the file, for messages
  AnalysisState state;
};

// One state from several. InputError naming the files and why for: states of other
// settings, models or corpora; a shard held twice (the same file twice, a re-run); states
// of different splits (a whole run and one of its shards); and, unless `partial`, a
// stopped state or a split with shards missing. The result records its coverage, and
// with `partial` data.partial = true and what is missing.
AnalysisState mergeStates(const std::vector<NamedState>& states, const SampleCaps& caps, bool partial = false);

}  // namespace posgeom::anova
