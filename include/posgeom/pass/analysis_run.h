#pragma once
// The analysis of one model, start to end: the plan, the tokenizer, a saved state resumed,
// the pass with its hooks (saves, stops, the ranks' agreement), and the end stages that
// need the model (heads, neurons). What `analyze` runs; the report is the job's.
// Torch-free header.
#include <optional>
#include <string>
#include <vector>

#include <memory>

#include "posgeom/anova/state_file.h"
#include "posgeom/anova/state_layers.h"
#include "posgeom/heads/contextual_neurons.h"
#include "posgeom/heads/head_analysis.h"
#include "posgeom/pass/options.h"
#include "posgeom/pass/run_control.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::pass {

struct AnalysisRun {
  anova::AnalysisState state;  // its layers empty where `saved` holds them
  // The state file, where the run never held every layer's statistics at once (layer-major,
  // one wave): its layers are read from it one at a time.
  std::shared_ptr<const anova::StateReader> saved;
  std::vector<heads::HeadReport> head_reports;        // with --heads
  std::optional<heads::NeuronAnalysis> neurons;        // with --neurons
  std::vector<std::string> token_names;                // the neurons' tokens, by id
  ReportOptions report;                                // fitted to the window and width

  anova::StateLayers layers() const { return saved ? anova::StateLayers(saved) : anova::StateLayers(state.layers); }
};

// `ranks` null: one process. As a rank of several other than rank 0 (control writes
// nothing), the run takes part in every collective and returns an empty AnalysisRun:
// rank 0 has the statistics of all. Throws RunStopped on a stop, InputError on bad input
// (before the weights are read where it can be judged from the config and the state).
AnalysisRun runAnalysis(const AnalyzeOptions& options, const RunControl& control, runtime::RankGroup* ranks);

}  // namespace posgeom::pass
