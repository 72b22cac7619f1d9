#include "posgeom/pass/run_hooks.h"

#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/random_checkpoint.h"
#include "posgeom/pass/rank_agreement.h"
#include "rank_threads.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// A run of 10 random windows of 12 tokens, 2 a batch, on a small random model: the pass
// with its corpus, as analysis_run sets it up, without a subprocess.
struct SmallRun {
  pass::AnalyzeOptions options;
  pass::PassPlan plan;
  std::shared_ptr<const pass::PassModel> model;

  explicit SmallRun(const fs::path& dir) {
    model::RandomCheckpointSpec spec;
    spec.layers = 2;
    spec.hidden_size = 16;
    spec.heads = 2;
    spec.vocab_size = 50;
    spec.max_positions = 16;
    model::writeRandomCheckpoint(spec, dir);
    options.seq_len = 12;
    options.report.screenot_k = 2;
    options.corpus.path = "random";
    options.num_seqs = 10;
    options.batch_size = 2;
    plan = pass::planPass(options, dir, model::loadModelConfig(dir));
    model = pass::loadPassModel(plan);
  }
};

// The pass over the corpus with `control`'s hooks; `saved` resumes a state first.
struct Driven {
  anova::AnalysisState state;
  std::unique_ptr<pass::AnalysisPass> pass;
};
Driven drive(const SmallRun& run, const pass::PassPlan& plan, const pass::RunControl& control, runtime::RankGroup* ranks,
             const anova::AnalysisState* saved = nullptr, bool finish = true) {
  Driven d{anova::AnalysisState{}, std::make_unique<pass::AnalysisPass>(plan, run.model)};
  d.state.settings = {{"tool", "posgeom"}, {"source", "model"}};
  auto stream = corpus::openCorpus(run.options.corpus, nullptr, 50);
  corpus::WindowSampler sampler(*stream, plan.windows);
  if (saved) d.pass->resumeFrom(*saved, sampler, "random", control.resume_state.string());
  pass::RunHooks hooks(control, ranks, *d.pass, d.state, 0.5, 0);
  {
    pass::WindowBatches batches(sampler, *stream, plan.pass.batch_size);
    d.pass->runAll(batches, hooks);
  }
  if (finish) hooks.snapshot(true, 1.0);
  return d;
}

pass::RunControl controlIn(const ScratchDir& s, const std::string& name) {
  pass::RunControl c;
  c.out = s / name;
  fs::create_directories(c.out);
  c.state_file = c.out / "state.safetensors";
  return c;
}

void expectSameSums(const std::vector<anova::LayerStatistics>& a, const std::vector<anova::LayerStatistics>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t l = 0; l < a.size(); ++l) {
    EXPECT_EQ(a[l].sequences, b[l].sequences) << l;
    EXPECT_TRUE(a[l].position_sum == b[l].position_sum) << l;
    EXPECT_TRUE(a[l].second_moment == b[l].second_moment) << l;
  }
}

// --stop-after: the state is saved at the stop (not complete), and the stop says where it
// is and how to continue, with exit code 0.
TEST(RunHooks, AStopSavesTheStateAndSaysHowToResume) {
  ScratchDir s;
  const SmallRun run(s / "m");
  auto control = controlIn(s, "out");
  control.stop_after = 4;
  try {
    drive(run, run.plan, control, nullptr);
    FAIL() << "no stop";
  } catch (const RunStopped& e) {
    EXPECT_EQ(e.exitCode(), 0);
    EXPECT_EQ(std::string(e.what()), "--stop-after: after 4 windows; the state is " + control.state_file.string() +
                                          "; the same command with --resume " + control.out.string() + " continues it");
  }
  const auto saved = anova::loadState(control.state_file);
  EXPECT_EQ(saved.windows, 4);
  EXPECT_EQ(saved.settings["data"]["complete"], false);
  EXPECT_EQ(saved.settings["timings"]["load_s"], 0.5);
  EXPECT_EQ(saved.layers.front().sequences, 4);
}

// --save-every: a save every 4 windows (the last one at 8 of 10), then the end's complete
// state holds every window and the pass's statistics as they are.
TEST(RunHooks, SavesEverySaveEveryWindowsAndCompletesAtTheEnd) {
  ScratchDir s;
  const SmallRun run(s / "m");
  auto control = controlIn(s, "out");
  control.save_every = 4;
  const auto unfinished = drive(run, run.plan, control, nullptr, nullptr, false);
  EXPECT_EQ(anova::loadState(control.state_file).windows, 8);
  drive(run, run.plan, control, nullptr);
  const auto saved = anova::loadState(control.state_file);
  EXPECT_EQ(saved.windows, 10);
  EXPECT_EQ(saved.settings["data"]["complete"], true);
  EXPECT_EQ(saved.settings["timings"]["forward_and_accumulate_s"], 1.0);
  expectSameSums(saved.layers, unfinished.pass->statistics());
}

// A state saved at a stop, resumed by a new pass and hooks, ends with the very sums of a
// run never stopped.
TEST(RunHooks, AResumedRunEndsWithTheSumsOfOneNeverStopped) {
  ScratchDir s;
  const SmallRun run(s / "m");
  const auto whole = controlIn(s, "whole");
  drive(run, run.plan, whole, nullptr);
  auto stopped = controlIn(s, "stopped");
  stopped.stop_after = 6;
  EXPECT_THROW(drive(run, run.plan, stopped, nullptr), RunStopped);
  const auto saved = anova::loadState(stopped.state_file);
  ASSERT_EQ(saved.windows, 6);
  auto resumed = stopped;
  resumed.stop_after = 0;
  resumed.resume_state = stopped.state_file;
  drive(run, run.plan, resumed, nullptr, &saved);
  expectSameSums(anova::loadState(stopped.state_file).layers, anova::loadState(whole.state_file).layers);
}

// Two ranks (threads, each its group): --stop-after counts the windows of both, so both
// stop after one batch each; rank 0 writes the state of both, and rank 1 says where it is.
TEST(RunHooks, RanksAgreeTheStopOnTheWindowsOfAll) {
  ScratchDir s;
  const SmallRun run(s / "m");
  auto control = controlIn(s, "out");
  control.stop_after = 4;
  const auto outcomes = runRankThreads(2, loopbackRendezvous(), std::chrono::seconds(30), [&](runtime::RankGroup& g) {
    auto plan = run.plan;
    pass::takeRankShard(plan, g);
    auto mine = control;
    if (!g.root()) mine.state_file.clear();
    drive(run, plan, mine, &g);
  });
  EXPECT_EQ(outcomes[0].message, "--stop-after: after 4 windows; the state is " + control.state_file.string() +
                                     "; the same command with --resume " + control.out.string() + " continues it");
  EXPECT_EQ(outcomes[1].message, "--stop-after: after 4 windows; the state is on rank 0, in " + control.out.string() +
                                     "; the same command with --resume " + control.out.string() + " continues it");
  const auto saved = anova::loadState(control.state_file);
  EXPECT_EQ(saved.windows, 4);
  EXPECT_EQ(saved.layers.front().sequences, 4);  // both ranks' windows, reduced on rank 0
  EXPECT_EQ(saved.settings["data"]["ranks"].size(), 2u);
}

// A rank that fails (bad input of its own) stops the other at its next step, which names
// the rank and its reason with the failed rank's exit code.
TEST(RunHooks, ARanksFailureEndsTheOthersRunNamingIt) {
  ScratchDir s;
  const SmallRun run(s / "m");
  const auto control = controlIn(s, "out");
  const auto outcomes = runRankThreads(2, loopbackRendezvous(), std::chrono::seconds(30), [&](runtime::RankGroup& g) {
    if (g.rank() == 1) {
      g.announceFailure(2, "posgeom: error: corpus.txt: not UTF-8");
      throw InputError("corpus.txt", "not UTF-8");
    }
    auto plan = run.plan;
    pass::takeRankShard(plan, g);
    drive(run, plan, control, &g);
  });
  EXPECT_TRUE(outcomes[0].failed);
  EXPECT_EQ(outcomes[0].exit_code, 2);
  EXPECT_EQ(outcomes[0].message, "rank 1 failed: posgeom: error: corpus.txt: not UTF-8");
  EXPECT_FALSE(fs::exists(control.state_file));  // the first step failed: nothing saved
}

}  // namespace
}  // namespace posgeom::testing
