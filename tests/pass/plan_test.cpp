#include "posgeom/pass/plan.h"

#include "posgeom/base/error.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/random_checkpoint.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

// A GPT-2 of 3 blocks (hidden states 0..3), 4 heads, 32 wide, 64 positions.
fs::path smallModel(const ScratchDir& s) {
  model::RandomCheckpointSpec spec;
  spec.layers = 3;
  spec.hidden_size = 32;
  spec.heads = 4;
  spec.max_positions = 64;
  model::writeRandomCheckpoint(spec, s / "m");
  return s / "m";
}

std::string planError(const pass::AnalyzeOptions& o, const fs::path& dir) {
  try {
    pass::planPass(o, dir, model::loadModelConfig(dir));
  } catch (const InputError& e) {
    return e.what();
  }
  return "";
}

pass::AnalyzeOptions shortWindows() {
  pass::AnalyzeOptions o;
  o.seq_len = 32;
  o.report.screenot_k = 5;
  return o;
}

TEST(Plan, ResolvesEverySettingFromTheOptionsAndTheConfig) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.layers = pass::parseLayerSelection("1,3");
  o.shard = pass::Shard{1, 4};
  o.num_seqs = 3;
  o.sampling = pass::Sampling::kRandom;
  o.seed = 9;
  o.skip_first = 2;
  o.heads = true;
  o.head_options.qk_maps = heads::parseHeadList("2.3");
  const auto plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  EXPECT_EQ(plan.pass.seq_len, 32);
  EXPECT_EQ(plan.pass.accumulator.layers, (std::set<int64_t>{1, 3}));
  EXPECT_EQ(plan.pass.accumulator.skip_first, 2);
  EXPECT_TRUE(plan.pass.accumulator.attention_inputs);
  EXPECT_EQ(plan.pass.last_layer, 3);
  EXPECT_FALSE(plan.pass.causal_mask.has_value());  // the model's own mask
  EXPECT_TRUE(plan.causal);
  EXPECT_EQ(plan.pass.batch_size, 3);  // preferredBatch (2048 / 32 = 64) capped by --num-seqs
  EXPECT_EQ(plan.shard, (pass::Shard{1, 4}));
  EXPECT_EQ(plan.windows.shard_index, 1);
  EXPECT_EQ(plan.windows.shard_count, 4);
  EXPECT_TRUE(plan.windows.random_offsets);
  EXPECT_EQ(plan.windows.seed, 9u);
  ASSERT_TRUE(plan.heads.has_value());
  EXPECT_EQ(plan.heads->qk_maps.front(), (std::pair<int64_t, int64_t>{2, 3}));
  EXPECT_GT(plan.memory.total(), 0);
  EXPECT_GT(plan.parameters, 0);
}

// The default --screenot-k (20) used to fail every window shorter than 43 and every model
// narrower than 42 with an error about an option the user never gave.
TEST(Plan, TheDefaultScreeNotBoundIsCutToFitAndAGivenOneIsKept) {
  ScratchDir s;
  const auto dir = smallModel(s);
  pass::AnalyzeOptions o;
  o.seq_len = 16;  // 15 positions x 32 dims: imputation needs 2k + 1 < 15
  o.heads = true;
  auto plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  EXPECT_EQ(plan.report.screenot_k, 6);
  EXPECT_EQ(plan.heads->subspace_k, 6);
  o.report.screenot_strategy = metrics::ScreeNotStrategy::kWinsorize;  // needs k < 15 only
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).report.screenot_k, 14);
  o.seq_len = 64;  // 63 x 32: 20 fits as it is (k < 32)
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).report.screenot_k, 20);
  o.report.screenot_strategy = metrics::ScreeNotStrategy::kImpute;  // 2k + 1 < 32: the width cuts it
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).report.screenot_k, 15);
  o.seq_len = 16;
  o.report.screenot_k = 7;
  o.report.screenot_k_given = true;
  EXPECT_EQ(planError(o, dir), "--screenot-k: 7 is too large for imputation: it needs 2k+1 < min(rows, cols) = 15");
  o.report.screenot_k = 6;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).report.screenot_k, 6);
  // Too short for any bound: the message says what to change, not that 20 is too large.
  o = pass::AnalyzeOptions();
  o.seq_len = 4;
  EXPECT_EQ(planError(o, dir), "--screenot-k: no bound fits a positional basis of 3 positions x 32 dims: ScreeNOT needs both "
                               "at least 4 (or 2 with --screenot-strategy w); analyse longer windows");
}

TEST(Plan, DefaultWindowIsTheModelsOrFiveHundredTwelve) {
  ScratchDir s;
  const auto dir = smallModel(s);
  pass::AnalyzeOptions o;
  o.report.screenot_k = 5;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).pass.seq_len, 64);
}

TEST(Plan, JudgesEveryOptionAgainstTheModel) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.layers = pass::parseLayerSelection("99");
  EXPECT_EQ(planError(o, dir), "--layer: '99' is not a hidden-state index in 0..3");
  o = shortWindows();
  o.seq_len = 65;
  EXPECT_EQ(planError(o, dir), "--seq-len: 65 exceeds the model's 64 learned positions");
  o = shortWindows();
  o.skip_first = 32;
  EXPECT_EQ(planError(o, dir), "--skip-first: leaves no positions of the 32");
  o = shortWindows();
  o.report.screenot_k = 20;
  o.report.screenot_k_given = true;
  EXPECT_NE(planError(o, dir).find("--screenot-k"), std::string::npos);
  o = shortWindows();
  o.num_seqs = 3;
  o.shard = pass::Shard{5, 8};
  EXPECT_EQ(planError(o, dir), "--shard: 5/8 leaves this shard no window: it reads windows 5, 13, ... of the --num-seqs 3 (0..2)");
  o = shortWindows();
  o.corpus.path = "random";
  EXPECT_EQ(planError(o, dir), "--corpus random: needs --num-seqs");
  o = shortWindows();
  o.max_memory = 1024;
  EXPECT_NE(planError(o, dir).find("not even one window fits"), std::string::npos);
}

// A wave holds two hidden states a window beside what a batch needs: what the memory
// left over allows, in whole batches, never less than one, never more than --num-seqs; a
// --wave that the memory cannot hold is refused with one that fits.
TEST(Plan, LayerMajorWavesTakeTheMemoryABatchLeaves) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.batch_size = 4;
  o.layer_major = true;
  const int64_t per_window = 2 * 32 * 32 * 4;  // T x d float32, twice
  const auto needs = pass::planPass(o, dir, model::loadModelConfig(dir)).memory.total();
  o.max_memory = needs + 10 * per_window + 7;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 8);  // 10 windows fit: 2 batches
  o.max_memory = needs;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 4);
  // Without --max-memory, three quarters of what the machine has free beside the batch.
  o.max_memory.reset();
  const auto automatic = pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows;
  const auto free_now = pass::availableMemory(o.device);
  ASSERT_TRUE(free_now.has_value());
  EXPECT_GE(automatic, 4);
  EXPECT_LE(static_cast<double>(automatic * per_window), 0.8 * static_cast<double>(*free_now));
  EXPECT_GE(static_cast<double>(automatic * per_window), 0.7 * static_cast<double>(*free_now - needs) - 4.0 * per_window);
  o.num_seqs = 3;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 3);
  o.num_seqs = 0;
  o.wave = 9;  // whole batches
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 8);
  o.max_memory = needs + 5 * per_window;
  EXPECT_NE(planError(o, dir).find("--wave: 9 windows would hold 64.0 KiB of hidden states but 40.0 KiB is left beside a "
                                   "batch (--max-memory); --wave 4 fits"),
            std::string::npos)
      << planError(o, dir);
  o.layer_major = false;
  EXPECT_NE(planError(o, dir).find("--wave"), std::string::npos);
}

// Where every weight does not fit beside the pass but two blocks' do, the plan goes
// layer-major by itself at the batch asked; where even that does not fit, it says so.
TEST(Plan, WeightsThatDoNotFitChooseLayerMajor) {
  ScratchDir s;
  const auto dir = smallModel(s);  // 3 blocks: two of them and the rest hold less than all
  auto o = shortWindows();
  o.batch_size = 4;
  const auto resident = pass::planPass(o, dir, model::loadModelConfig(dir));
  EXPECT_EQ(resident.wave_windows, 0);
  o.layer_major = true;
  const auto forced = pass::planPass(o, dir, model::loadModelConfig(dir));
  ASSERT_LT(forced.memory.weights, resident.memory.weights);
  EXPECT_EQ(forced.memory.total() - forced.memory.weights, resident.memory.total() - resident.memory.weights);
  o.layer_major = false;
  o.max_memory = forced.memory.total() + 2 * 32 * 32 * 4 * 4;  // and one batch's wave
  const auto chosen = pass::planPass(o, dir, model::loadModelConfig(dir));
  EXPECT_EQ(chosen.wave_windows, 4);
  EXPECT_EQ(chosen.pass.batch_size, 4);
  EXPECT_EQ(chosen.memory.total(), forced.memory.total());
  o.max_memory = forced.memory.total() - 1;
  EXPECT_NE(planError(o, dir).find("the pass needs about"), std::string::npos) << planError(o, dir);
}

// --layer-cosines: measured only where asked, never layer-major (a batch's every layer at
// once), costing its unit vectors in the estimate; with --layer-major asked too, refused.
TEST(Plan, LayerCosinesWhereAskedOutsideLayerMajor) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.batch_size = 4;
  o.num_seqs = 8;
  const auto plain = pass::planPass(o, dir, model::loadModelConfig(dir));
  EXPECT_FALSE(plain.pass.accumulator.layer_cosines);
  o.layer_cosines = true;
  const auto asked = pass::planPass(o, dir, model::loadModelConfig(dir));
  EXPECT_TRUE(asked.pass.accumulator.layer_cosines);
  EXPECT_EQ(asked.memory.activations - plain.memory.activations, 4LL * 4 * 31 * 32 * 5);  // 4 hidden states and a product
  o.layer_major = true;
  EXPECT_NE(planError(o, dir).find("--layer-cosines: needs a batch's every layer at once"), std::string::npos) << planError(o, dir);
  // Where the plan itself goes layer-major (the weights do not fit), they are left out.
  o.layer_major = false;
  o.layer_cosines = false;
  auto forced = o;
  forced.layer_major = true;
  const auto layer_major = pass::planPass(forced, dir, model::loadModelConfig(dir));
  o.layer_cosines = true;
  o.max_memory = layer_major.memory.total() + 2 * 32 * 32 * 4 * 4;
  const auto chosen = pass::planPass(o, dir, model::loadModelConfig(dir));
  ASSERT_GT(chosen.wave_windows, 0);  // layer-major chosen
  EXPECT_FALSE(chosen.pass.accumulator.layer_cosines);
}

// Every one of --num-seqs windows in a wave is one wave, its last batch short: each
// weight read once (10 windows in batches of 4 were two waves of 8 and 2 before).
TEST(Plan, AWaveThatHoldsEveryWindowIsOneWave) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.batch_size = 4;
  o.layer_major = true;
  o.num_seqs = 10;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 12);
  o.wave = 10;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 12);
  o.wave = 9;
  EXPECT_EQ(pass::planPass(o, dir, model::loadModelConfig(dir)).wave_windows, 8);
}

// A run that hands each final layer to a file (one process that writes its state) and
// holds all its windows in one wave is counted with two layers' statistics, not every
// layer's: a budget that refuses the run that holds them all lets it run; with more
// windows than one wave holds, or for a run that keeps its layers, all are counted.
TEST(Plan, OneWaveThatHandsItsLayersToFilesCountsTwoLayersStatistics) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.batch_size = 4;
  o.layer_major = true;
  o.num_seqs = 8;
  o.layers = pass::parseLayerSelection("all");  // 4 hidden states
  const auto config = model::loadModelConfig(dir);
  const auto held = pass::planPass(o, dir, config);
  const auto handed = pass::planPass(o, dir, config, pass::FinalLayers::kHandedToFiles);
  EXPECT_EQ(handed.memory.statistics * 4, held.memory.statistics * 2);
  EXPECT_EQ(handed.wave_windows, 8);
  const int64_t per_window = 2 * 32 * 32 * 4;
  o.max_memory = handed.memory.total() + 8 * per_window;
  EXPECT_NE(planError(o, dir).find("the pass needs about"), std::string::npos);
  const auto fits = pass::planPass(o, dir, config, pass::FinalLayers::kHandedToFiles);
  EXPECT_EQ(fits.memory.total(), handed.memory.total());
  EXPECT_EQ(fits.pass.batch_size, 4);
  EXPECT_EQ(fits.wave_windows, 8);
  // A window short of one wave: every layer counted, and the budget is too small.
  o.max_memory = handed.memory.total() + 7 * per_window;
  EXPECT_THROW(pass::planPass(o, dir, config, pass::FinalLayers::kHandedToFiles), InputError);
  // Windows unknown (the whole corpus): counted as held.
  o.max_memory.reset();
  o.num_seqs = 0;
  EXPECT_EQ(pass::planPass(o, dir, config, pass::FinalLayers::kHandedToFiles).memory.statistics,
            pass::planPass(o, dir, config).memory.statistics);
}

TEST(Plan, QkHeadsAreNamedByTheirZeroBasedBlock) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = shortWindows();
  o.heads = true;
  o.head_options.qk_maps = heads::parseHeadList("0.0,2.3");  // blocks 0 and 2: valid now, 0.H was not before
  EXPECT_EQ(planError(o, dir), "");
  o.head_options.qk_maps = heads::parseHeadList("3.0");  // the old name of block 2's head 0
  const auto old_name = planError(o, dir);
  EXPECT_NE(old_name.find("3.0 names no block: the model's blocks are 0..2"), std::string::npos) << old_name;
  EXPECT_NE(old_name.find("0-based block"), std::string::npos);
  o.head_options.qk_maps = heads::parseHeadList("1.4");
  EXPECT_NE(planError(o, dir).find("1.4 names no head"), std::string::npos);
  o.head_options.qk_maps = heads::parseHeadList("1.0");
  o.layers = pass::parseLayerSelection("0,1");  // block 1 writes hidden.2, not selected
  EXPECT_NE(planError(o, dir).find("1.0 is not analysed: block 1 writes hidden.2"), std::string::npos);
}

TEST(Plan, CausalMaskForABidirectionalModelOnlyWhenAsked) {
  ScratchDir s;
  model::RandomCheckpointSpec spec;
  spec.model_type = "bert";
  spec.layers = 1;
  spec.hidden_size = 32;
  spec.heads = 2;
  spec.max_positions = 64;
  model::writeRandomCheckpoint(spec, s / "bert");
  auto o = shortWindows();
  auto plan = pass::planPass(o, s / "bert", model::loadModelConfig(s / "bert"));
  EXPECT_FALSE(plan.causal);
  EXPECT_FALSE(plan.pass.causal_mask.has_value());
  o.causal = true;
  plan = pass::planPass(o, s / "bert", model::loadModelConfig(s / "bert"));
  EXPECT_TRUE(plan.causal);
  EXPECT_EQ(plan.pass.causal_mask, std::optional<bool>(true));
}

}  // namespace
}  // namespace posgeom::testing
