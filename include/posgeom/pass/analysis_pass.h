#pragma once
// The one analysis pass: the model, the accumulators and the batches of windows, as
// `analyze`, `merge`, `bench` and `batch` run it. A batch is one call (windows identified,
// the forward pass with the accumulators observing it, NaN/Inf checked); the loop over the
// corpus takes hooks for progress, saving and stopping. Torch-free header: Torch stays in
// the implementation.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "posgeom/anova/state_file.h"
#include "posgeom/pass/plan.h"
#include "posgeom/pass/token_hash.h"
#include "posgeom/pass/window_batches.h"

namespace posgeom::pass {

// A model in memory, on its device (defined where Torch is).
class PassModel;
// Reads the weights: the first large read of a run, once the plan has judged every option.
// A layer-major plan's model streams its blocks' weights from the checkpoint (each read
// when its block runs on a wave, let go after); any other holds them all.
std::shared_ptr<const PassModel> loadPassModel(const PassPlan& plan);
std::shared_ptr<const PassModel> loadPassModel(const std::filesystem::path& model_dir, const runtime::DeviceSpec& device,
                                               runtime::ComputeDtype dtype, bool stream_blocks = false);
const model::ModelConfig& configOf(const PassModel& model);
// Bytes of the checkpoint the model has read so far (a streamed block's each time it is read).
int64_t weightBytesRead(const PassModel& model);

struct BatchSeconds {
  double total = 0;
  double accumulating = 0;  // inside the accumulators; measured on the CPU only (a GPU queues)
};

// What happens after a step of the loop.
struct StepDecision {
  bool save = false;
  bool stop = false;      // after the save
  bool finished = false;  // the pass is over
};

// What the loop tells its hooks, and asks of them, after every batch.
class PassHooks {
 public:
  virtual ~PassHooks() = default;
  virtual void afterBatch(int64_t /*windows*/) {}
  virtual bool stopRequested(int64_t /*windows*/) { return false; }
  virtual bool saveDue(int64_t /*windows*/) { return false; }
  // After each step (a batch, or none once this process's corpus ended): by default from
  // stopRequested and saveDue, finished when the corpus ended. A distributed run's hooks
  // agree it with the other ranks: a rank whose corpus ended keeps stepping, without
  // batches, until every rank's has.
  virtual StepDecision decide(int64_t windows, bool corpus_ended);
  virtual void save(int64_t /*windows*/) {}
  // After the save of a stop; may throw (RunStopped) to end the run.
  virtual void stopped(int64_t /*windows*/) {}
};

class AnalysisPass {
 public:
  AnalysisPass(const PassPlan& plan, std::shared_ptr<const PassModel> model);
  ~AnalysisPass();
  AnalysisPass(const AnalysisPass&) = delete;
  AnalysisPass& operator=(const AnalysisPass&) = delete;

  const PassPlan& plan() const;
  const PassModel& model() const;

  // One batch ([windows x T] ids): the only place the pass's sequence is written.
  BatchSeconds run(const WindowBatch& batch);
  // A wave of batches, layer-major (Model::forwardWave): each layer's statistics take the
  // batches in the order given, so they are the numbers run() of each in turn gives.
  // `last`: no batch comes after it, so a layer is final once its block has run (see
  // handLayersTo).
  BatchSeconds runWave(const std::vector<WindowBatch>& wave, bool last = false);
  // The same forward pass with nothing observing it: what the pass is compared with.
  BatchSeconds forwardOnly(const WindowBatch& batch) const;

  // Batches until the corpus ends or a hook stops the pass; the ids are hashed and counted.
  // Layer-major (plan().wave_windows > 0): waves of batches, the hooks asked after each.
  void runAll(WindowBatches& batches, PassHooks& hooks);
  // Layer-major: the last wave (the whole corpus, when it fits one) hands each layer, once
  // its block has run, to a file of its own in `dir` and releases it, so that the pass
  // holds one or two layers' statistics, never every layer's. The files are the state's
  // (layerFiles(), anova::saveState) until the pass ends, which removes them.
  void handLayersTo(const std::filesystem::path& dir);
  const std::vector<std::filesystem::path>& layerFiles() const;
  // A resumed run: reads the saved run's windows again without a forward pass, checks that
  // they are the same tokens (InputError naming `corpus` otherwise) and restores its sums.
  void resumeFrom(const anova::AnalysisState& saved, corpus::WindowSampler& sampler, const std::string& corpus,
                  const std::string& where);

  int64_t windows() const;
  const TokenHash& hash() const;
  // What the sampler and the stream had read when the last batch was cut (the reader runs
  // one batch ahead of the pass).
  const corpus::WindowStats& windowsRead() const;
  const corpus::TokenStreamStats& streamRead() const;

  // Of the layers not handed to files.
  std::vector<anova::LayerStatistics> statistics() const;
  // At the end: each layer released once copied, so the statistics are never held twice.
  std::vector<anova::LayerStatistics> takeStatistics();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace posgeom::pass
