#include "posgeom/pass/run_hooks.h"

#include <csignal>
#include <string>

#include "posgeom/base/error.h"
#include "posgeom/pass/rank_agreement.h"
#include "posgeom/pass/rank_reduce.h"

namespace posgeom::pass {

RunHooks::RunHooks(const RunControl& control, runtime::RankGroup* ranks, AnalysisPass& pass, anova::AnalysisState& state,
                   double load_s, double forward_s_before)
    : control_(control),
      ranks_(ranks),
      pass_(pass),
      state_(state),
      load_s_(load_s),
      forward_s_before_(forward_s_before),
      saved_at_(pass.windows()),
      all_windows_(pass.windows()),
      progress_("analyze", pass.plan().windows.max_windows / pass.plan().shard.count, "windows") {}

void RunHooks::afterBatch(int64_t windows) { progress_.update(windows, windows * pass_.plan().pass.seq_len); }

bool RunHooks::stopRequested(int64_t windows) {
  return signals_.received() != 0 || (control_.stop_after > 0 && windows >= control_.stop_after);
}

bool RunHooks::saveDue(int64_t windows) {
  return control_.save_every > 0 ? windows - saved_at_ >= control_.save_every
                                 : secondsSince(last_save_) >= control_.save_interval_s;
}

StepDecision RunHooks::decide(int64_t windows, bool corpus_ended) {
  if (!ranks_) return PassHooks::decide(windows, corpus_ended);
  const bool interval_due = control_.save_every == 0 && secondsSince(last_save_) >= control_.save_interval_s;
  const auto sums = ranks_->sumAll({corpus_ended ? 1 : 0, signals_.received() != 0 ? 1 : 0, interval_due ? 1 : 0, windows});
  all_windows_ = sums[3];
  another_rank_signalled_ = sums[1] > 0;
  const bool stop = sums[1] > 0 || (control_.stop_after > 0 && all_windows_ >= control_.stop_after);
  const bool all_ended = sums[0] == ranks_->world();
  const bool save =
      stop || (!all_ended && (sums[2] > 0 || (control_.save_every > 0 && all_windows_ - saved_at_ >= control_.save_every)));
  return {save, stop, all_ended && !stop};
}

void RunHooks::save(int64_t windows) {
  snapshot(false);
  saved_at_ = ranks_ ? all_windows_ : windows;
  last_save_ = SteadyClock::now();
}

void RunHooks::stopped(int64_t windows) {
  progress_.finish();
  const int signal = signals_.received() ? signals_.received() : another_rank_signalled_ ? SIGTERM : 0;
  const std::string where = ranks_ && !ranks_->root() ? "on rank 0, in " + control_.out.string() : control_.state_file.string();
  throw RunStopped((signal ? std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") +
                                 (signals_.received() ? "" : " on another rank") + " after "
                           : "--stop-after: after ") +
                       std::to_string(ranks_ ? all_windows_ : windows) + " windows; the state is " + where +
                       "; the same command with --resume " + control_.out.string() + " continues it",
                   signal ? 128 + signal : 0);
}

void RunHooks::resumedAt(int64_t all_windows) { saved_at_ = all_windows_ = all_windows; }
int64_t RunHooks::allWindows() const { return ranks_ ? all_windows_ : pass_.windows(); }
double RunHooks::forwardSeconds() const { return forward_s_before_ + secondsSince(start_); }
void RunHooks::finish() { progress_.finish(); }

void RunHooks::snapshot(bool complete, double final_forward_s) {
  const auto& ws = pass_.windowsRead();
  const auto& ss = pass_.streamRead();
  nlohmann::json data = {{"windows", pass_.windows()},
                         {"tokens_read", ws.tokens_read},
                         {"documents", ws.documents_seen},
                         {"token_hash", pass_.hash().hex()},
                         {"invalid_utf8_replaced", ss.invalid_utf8_replaced},
                         {"skipped_rows", ss.skipped_rows},
                         {"complete", complete}};
  state_.settings["timings"] = {{"load_s", load_s_}, {"forward_and_accumulate_s", complete ? final_forward_s : forwardSeconds()}};
  state_.layers = complete ? pass_.takeStatistics() : pass_.statistics();
  if (ranks_) {
    const auto start = SteadyClock::now();
    state_.layers = reduceToRoot(std::move(state_.layers), *ranks_, pass_.plan().pass.accumulator.caps);
    data = combinedData(ranks_->gatherAll(data.dump()), complete);
    state_.settings["timings"]["rank_reduce_s"] = reduce_s_ += secondsSince(start);
    if (!ranks_->root()) return;
  }
  state_.settings["data"] = data;
  state_.windows = data["windows"].get<int64_t>();
  anova::saveState(state_, pass_.layerFiles(), control_.state_file);  // with the layers handed to files, if any
}

}  // namespace posgeom::pass
