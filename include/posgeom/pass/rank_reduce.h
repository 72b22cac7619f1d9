#pragma once
// The statistics of all ranks of a distributed run as one, on rank 0: what `merge` makes
// of the ranks' states, made with the group's collectives instead of files. Torch-free.
#include <functional>
#include <vector>

#include "posgeom/anova/layer_statistics.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::pass {

// Every rank calls it with its layers (in the same layer order); rank 0 gets the sums of
// all ranks and the bounded samples of the lowest window indices over all of them (as
// anova::merge keeps them), the others an empty vector. A rank that saw no window takes
// part with zeros.
std::vector<anova::LayerStatistics> reduceToRoot(std::vector<anova::LayerStatistics> layers, runtime::RankGroup& group,
                                                 const anova::SampleCaps& caps);

}  // namespace posgeom::pass

namespace posgeom::pass {

// A distributed run's saved layers as rank `group.rank()` resumes them: rank 0 (which
// read the state; `saved` is ignored elsewhere) takes every sum, the others zeros of the
// same shapes; each rank the bounded samples of its own windows (`own(window)`), so that
// each rank goes on keeping its lowest windows and the end's reduction is the same as
// the unstopped run's.
std::vector<anova::LayerStatistics> resumeShare(const std::vector<anova::LayerStatistics>& saved, runtime::RankGroup& group,
                                                const std::function<bool(int64_t)>& own);

}  // namespace posgeom::pass
