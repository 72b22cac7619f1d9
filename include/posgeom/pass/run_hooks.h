#pragma once
// The hooks of an analysis run's pass: progress, periodic and final saves, and stops
// (SIGINT/SIGTERM, --stop-after). As one rank of several, every step is agreed by all (a
// stop or save anywhere is one everywhere; --stop-after and --save-every count the
// windows of all ranks), the state is the reduction of all ranks' statistics, and rank 0
// alone writes it. Torch-free header.
#include <cstdint>

#include "posgeom/anova/state_file.h"
#include "posgeom/base/progress.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/base/stopwatch.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/run_control.h"
#include "posgeom/runtime/rank_group.h"

namespace posgeom::pass {

class RunHooks final : public PassHooks {
 public:
  // `ranks` null: one process. `state`: its settings are the run's; each save fills in
  // the rest. `load_s` and `forward_s_before` (a resumed run's) go into its timings.
  RunHooks(const RunControl& control, runtime::RankGroup* ranks, AnalysisPass& pass, anova::AnalysisState& state,
           double load_s, double forward_s_before);

  void afterBatch(int64_t windows) override;
  bool stopRequested(int64_t windows) override;
  bool saveDue(int64_t windows) override;
  StepDecision decide(int64_t windows, bool corpus_ended) override;
  void save(int64_t windows) override;
  // Throws RunStopped: the stop's reason, where the state is, and how to continue it.
  void stopped(int64_t windows) override;

  // A resumed distributed run counts from the windows of all ranks the state holds.
  void resumedAt(int64_t all_windows);
  // The windows of every rank (this rank's alone when it is the only one).
  int64_t allWindows() const;
  double forwardSeconds() const;
  void finish();
  // The state as it stands, saved (by the process that writes): every --save-every
  // windows, on a stop, and at the end (`complete`, its forward seconds `final_forward_s`).
  void snapshot(bool complete, double final_forward_s = 0);

 private:
  const RunControl control_;
  runtime::RankGroup* ranks_;
  AnalysisPass& pass_;
  anova::AnalysisState& state_;
  double load_s_, forward_s_before_, reduce_s_ = 0;
  int64_t saved_at_, all_windows_;
  bool another_rank_signalled_ = false;
  SteadyClock::time_point start_ = SteadyClock::now(), last_save_ = start_;
  const StopSignals signals_;
  ProgressLine progress_;
};

}  // namespace posgeom::pass
