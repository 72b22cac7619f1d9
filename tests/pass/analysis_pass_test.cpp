#include "posgeom/pass/analysis_pass.h"

#include <ATen/ATen.h>

#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/random_checkpoint.h"
#include "posgeom/runtime/torch_device.h"
#include "anova_fixtures.h"
#include "test_devices.h"
#include "test_support.h"

namespace posgeom::testing {
namespace {
namespace fs = std::filesystem;

fs::path smallModel(const ScratchDir& s, int64_t width = 32) {
  model::RandomCheckpointSpec spec;
  spec.layers = 2;
  spec.hidden_size = width;
  spec.heads = 4;
  spec.vocab_size = 100;
  spec.max_positions = 16;
  spec.init_std = 0.2;
  model::writeRandomCheckpoint(spec, s / ("m" + std::to_string(width)));
  return s / ("m" + std::to_string(width));
}

pass::PassPlan planFor(const fs::path& dir, bool heads = false, const std::string& device = "cpu") {
  pass::AnalyzeOptions o;
  o.device = runtime::parseDevice(device);
  o.seq_len = 12;
  o.report.screenot_k = 2;
  o.heads = heads;
  return pass::planPass(o, dir, model::loadModelConfig(dir));
}

pass::WindowBatch batchOf(int64_t windows, int64_t seq_len, int64_t first_index) {
  pass::WindowBatch b;
  for (int64_t i = 0; i < windows * seq_len; ++i) b.ids.push_back(static_cast<int32_t>((i * 37 + first_index) % 100));
  for (int64_t w = 0; w < windows; ++w) {
    b.indices.push_back(first_index + w);
    b.labels.push_back(w % 2 ? "odd" : "even");
  }
  return b;
}

class AnalysisPassOnDevice : public ::testing::TestWithParam<std::string> {};
INSTANTIATE_TEST_SUITE_P(Devices, AnalysisPassOnDevice, ::testing::ValuesIn(testDevices()), deviceCaseName);

// The pass's batch is the sequence written out by hand: windows identified, the forward
// pass on the plan's device observed by the accumulators as the plan configures them,
// NaN/Inf checked.
TEST_P(AnalysisPassOnDevice, ABatchIsTheForwardPassObservedByThePlansAccumulators) {
  ScratchDir s;
  const auto dir = smallModel(s);
  const auto device = runtime::parseDevice(GetParam());
  for (const bool heads : {false, true}) {
    const auto plan = planFor(dir, heads, GetParam());
    ASSERT_EQ(plan.pass.device, device);
    pass::AnalysisPass analysis(plan, pass::loadPassModel(plan));
    const auto loaded = model::loadModel(dir, model::Numerics::parse("float32", GetParam()));
    anova::Accumulator by_hand(plan.pass.accumulator, 12, 32, runtime::torchDevice(device));
    for (int64_t start : {0, 3}) {
      auto batch = batchOf(3, 12, start);
      const auto seconds = analysis.run(batch);
      EXPECT_GT(seconds.total, 0);
      if (!device.isCuda()) {
        EXPECT_GT(seconds.accumulating, 0);  // timed on the CPU only: a GPU queues
      }
      EXPECT_LT(seconds.accumulating, seconds.total);
      model::ForwardRequest request;
      request.ids = at::from_blob(batch.ids.data(), {3, 12}, at::TensorOptions().dtype(at::kInt))
                        .to(runtime::torchDevice(device), at::kLong);
      request.last_layer = plan.pass.last_layer;
      request.observer = &by_hand;
      by_hand.beginBatch(batch.indices, batch.labels, request.ids);
      loaded.model->forward(request);
      by_hand.checkFinite();
    }
    expectSameStatistics(analysis.statistics(), by_hand.statistics());
    EXPECT_EQ(analysis.statistics().front().attention_input_sum.size() > 0, false);  // hidden.0 has no block
    EXPECT_EQ(analysis.statistics().back().attention_input_sum.size() > 0, heads);
  }
}

TEST(AnalysisPass, ForwardOnlyLeavesTheStatisticsAlone) {
  ScratchDir s;
  const auto dir = smallModel(s);
  const auto plan = planFor(dir);
  pass::AnalysisPass analysis(plan, pass::loadPassModel(plan));
  analysis.run(batchOf(2, 12, 0));
  const auto before = analysis.statistics();
  analysis.forwardOnly(batchOf(2, 12, 2));
  expectSameStatistics(analysis.statistics(), before);
}

TEST(AnalysisPass, RefusesAModelItWasNotPlannedFor) {
  ScratchDir s;
  const auto plan = planFor(smallModel(s, 32));
  EXPECT_THROW(pass::AnalysisPass(plan, pass::loadPassModel(smallModel(s, 16), runtime::DeviceSpec{},
                                                            runtime::ComputeDtype::kFloat32)),
               InputError);
}

// Counts what the loop asks its hooks; stops after a given number of windows.
struct RecordingHooks final : pass::PassHooks {
  int64_t stop_at = 0;
  std::vector<int64_t> after, saved;
  int64_t stopped_at = -1;
  void afterBatch(int64_t w) override { after.push_back(w); }
  bool stopRequested(int64_t w) override { return stop_at > 0 && w >= stop_at; }
  bool saveDue(int64_t w) override { return w % 4 == 0; }
  void save(int64_t w) override { saved.push_back(w); }
  void stopped(int64_t w) override { stopped_at = w; }
};

// Ten random windows in batches of two through the loop.
pass::AnalyzeOptions loopOptions() {
  pass::AnalyzeOptions o;
  o.seq_len = 12;
  o.report.screenot_k = 2;
  o.corpus.path = "random";
  o.num_seqs = 10;
  o.batch_size = 2;
  return o;
}

// The loop over `o`'s corpus as `plan` says, its hooks stopping at `stop_at` windows (0: never).
struct LoopRun {
  RecordingHooks hooks;
  int64_t windows = 0;
  std::string hash;
  std::vector<anova::LayerStatistics> statistics;
};
LoopRun runLoop(const pass::AnalyzeOptions& o, const pass::PassPlan& plan, std::shared_ptr<const pass::PassModel> model,
                int64_t stop_at = 0) {
  auto stream = corpus::openCorpus(o.corpus, nullptr, 100);
  corpus::WindowSampler sampler(*stream, plan.windows);
  pass::AnalysisPass analysis(plan, std::move(model));
  LoopRun run;
  run.hooks.stop_at = stop_at;
  pass::WindowBatches batches(sampler, *stream, plan.pass.batch_size);
  analysis.runAll(batches, run.hooks);
  run.windows = analysis.windows();
  run.hash = analysis.hash().hex();
  run.statistics = analysis.statistics();
  return run;
}

TEST(AnalysisPass, TheLoopHashesCountsSavesAndStopsAsItsHooksSay) {
  ScratchDir s;
  const auto dir = smallModel(s);
  const auto o = loopOptions();
  const auto plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  const auto model = pass::loadPassModel(plan);
  const auto all = runLoop(o, plan, model);
  EXPECT_EQ(all.windows, 10);
  EXPECT_EQ(all.hooks.after, (std::vector<int64_t>{2, 4, 6, 8, 10}));
  EXPECT_EQ(all.hooks.saved, (std::vector<int64_t>{4, 8}));  // the last batch is the job's to save
  EXPECT_EQ(all.hooks.stopped_at, -1);
  const auto stopped = runLoop(o, plan, model, 6);
  EXPECT_EQ(stopped.windows, 6);
  EXPECT_EQ(stopped.hooks.saved, (std::vector<int64_t>{4, 6}));  // a stop saves first
  EXPECT_EQ(stopped.hooks.stopped_at, 6);
}

// Layer-major: waves of two batches, each block run on a whole wave before the next, its
// weights read from the checkpoint then. The hooks are asked after each wave, and every
// statistic is the resident pass's, bit for bit.
TEST(AnalysisPass, LayerMajorWavesGiveTheResidentStatistics) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = loopOptions();
  o.heads = true;
  const auto resident_plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  o.layer_major = true;
  o.wave = 4;
  const auto wave_plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  ASSERT_EQ(resident_plan.wave_windows, 0);
  ASSERT_EQ(wave_plan.wave_windows, 4);
  const auto resident = runLoop(o, resident_plan, pass::loadPassModel(resident_plan));
  const auto layer_major = runLoop(o, wave_plan, pass::loadPassModel(wave_plan));  // its blocks streamed
  EXPECT_EQ(resident.hooks.after, (std::vector<int64_t>{2, 4, 6, 8, 10}));
  EXPECT_EQ(layer_major.hooks.after, (std::vector<int64_t>{4, 8, 10}));
  EXPECT_EQ(layer_major.windows, 10);
  EXPECT_EQ(layer_major.hash, resident.hash);
  ASSERT_EQ(layer_major.statistics.size(), 3u);
  EXPECT_GT(layer_major.statistics[2].attention_input_sum.size(), 0);
  expectSameStatistics(resident.statistics, layer_major.statistics);
}

// Layer-major: the last wave hands each layer, once its block has run, to a file of its
// own and lets it go; the state put together from those files is the resident pass's, in
// one wave or in the last of several, and the files go with the pass.
TEST(AnalysisPass, TheLastWaveHandsEachFinalLayerToAFile) {
  ScratchDir s;
  const auto dir = smallModel(s);
  auto o = loopOptions();
  o.heads = true;
  const auto resident_plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  const auto resident = runLoop(o, resident_plan, pass::loadPassModel(resident_plan));
  o.layer_major = true;
  for (const int64_t wave : {int64_t{10}, int64_t{4}}) {
    SCOPED_TRACE(std::to_string(wave) + " windows a wave");
    o.wave = wave;
    const auto plan = pass::planPass(o, dir, model::loadModelConfig(dir));
    ASSERT_TRUE(plan.pass.accumulator.allocate_on_first_use);
    const auto parts = s / ("parts-" + std::to_string(wave));
    fs::create_directories(parts);
    std::vector<fs::path> files;
    {
      auto stream = corpus::openCorpus(o.corpus, nullptr, 100);
      corpus::WindowSampler sampler(*stream, plan.windows);
      pass::AnalysisPass analysis(plan, pass::loadPassModel(plan));
      analysis.handLayersTo(parts);
      RecordingHooks hooks;
      pass::WindowBatches batches(sampler, *stream, plan.pass.batch_size);
      analysis.runAll(batches, hooks);
      EXPECT_TRUE(analysis.statistics().empty());  // every layer handed over
      files = analysis.layerFiles();
      ASSERT_EQ(files.size(), 3u);
      anova::AnalysisState state;
      anova::saveState(state, files, s / "state.safetensors");
    }
    for (const auto& file : files) EXPECT_FALSE(fs::exists(file)) << file;
    expectSameStatistics(resident.statistics, anova::loadState(s / "state.safetensors").layers);
  }
}

// Every weight read once: a resident model reads each stored tensor at load; a streamed one
// the tensors outside its blocks at load and each block's once a wave (one wave: each
// weight once in all).
TEST(AnalysisPass, AStreamedModelReadsEachBlockOnceAWave) {
  ScratchDir s;
  const auto dir = smallModel(s);
  int64_t stored = 0, in_blocks = 0;
  const auto file = io::SafetensorsFile::open(dir / "model.safetensors");
  for (const auto& [name, view] : file.tensors()) {
    stored += static_cast<int64_t>(view.nbytes);
    if (name.rfind("h.", 0) == 0) in_blocks += static_cast<int64_t>(view.nbytes);
  }
  ASSERT_GT(in_blocks, stored / 2);
  auto o = loopOptions();
  const auto resident_plan = pass::planPass(o, dir, model::loadModelConfig(dir));
  const auto resident = pass::loadPassModel(resident_plan);
  EXPECT_EQ(pass::weightBytesRead(*resident), stored);
  runLoop(o, resident_plan, resident);
  EXPECT_EQ(pass::weightBytesRead(*resident), stored);
  o.layer_major = true;
  for (const auto& [wave, waves] : std::vector<std::pair<int64_t, int64_t>>{{10, 1}, {4, 3}}) {
    o.wave = wave;
    const auto plan = pass::planPass(o, dir, model::loadModelConfig(dir));
    const auto streamed = pass::loadPassModel(plan);
    EXPECT_EQ(pass::weightBytesRead(*streamed), stored - in_blocks);
    runLoop(o, plan, streamed);
    EXPECT_EQ(pass::weightBytesRead(*streamed), stored - in_blocks + waves * in_blocks) << wave << " windows a wave";
  }
}

}  // namespace
}  // namespace posgeom::testing
