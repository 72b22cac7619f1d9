#include "posgeom/jobs/bench_layer_major.h"

#include "posgeom/model/architecture.h"
#include "posgeom/model/random_checkpoint.h"
#include "posgeom/pass/plan.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {

// Each timed run (two warm-ups, then two a round) numbers its windows anew, each pass runs
// its own half, and both rates come out of the rounds.
TEST(BenchLayerMajor, TimesBothOrdersOverTheSameBatches) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.layers = 2, spec.hidden_size = 32, spec.heads = 4, spec.vocab_size = 100, spec.max_positions = 32;
  model::writeRandomCheckpoint(spec, s / "m");
  pass::AnalyzeOptions o;
  o.seq_len = 12;
  o.batch_size = 2;
  o.report.screenot_k = 2;
  const auto plan = pass::planPass(o, s / "m", model::loadModelConfig(s / "m"));
  pass::AnalysisPass analysis(plan, pass::loadPassModel(plan));
  pass::AnalysisPass streamed(plan, pass::loadPassModel(s / "m", plan.pass.device, plan.pass.dtype, true));
  std::vector<pass::WindowBatch> wave(3);
  for (auto& b : wave) {
    b.ids.assign(2 * 12, 7);
    b.indices = {0, 0};
    b.labels = {"a", "b"};
  }
  int64_t next_window = 100;
  const auto rates = jobs::measureLayerMajor(analysis, streamed, wave, 3, plan.pass.device, next_window);
  EXPECT_EQ(next_window, 100 + (2 + 2 * 3) * 6);
  EXPECT_EQ(wave.back().indices.back(), next_window - 1);
  EXPECT_GT(rates.tokens_per_s, 0);
  EXPECT_GT(rates.vs_resident, 0);
  // A warm-up of one batch (2 windows), then the whole wave (6) each round.
  EXPECT_EQ(analysis.statistics().front().sequences, 2 + 3 * 6);
  EXPECT_EQ(streamed.statistics().front().sequences, 2 + 3 * 6);
}

}  // namespace
}  // namespace posgeom::testing
