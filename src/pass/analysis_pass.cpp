#include "posgeom/pass/analysis_pass.h"

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <optional>

#include "pass_model.h"
#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/stopwatch.h"

namespace posgeom::pass {
namespace {

using Clock = SteadyClock;

// Times the accumulators' calls. On the CPU a call returns when its work is done; on a GPU
// once its work is queued, so there the time would mean nothing and is not taken.
class TimedObserver final : public model::LayerObserver {
 public:
  explicit TimedObserver(model::LayerObserver& inner) : inner_(inner) {}
  void onHidden(int64_t layer, const at::Tensor& hidden) override {
    const auto start = Clock::now();
    inner_.onHidden(layer, hidden);
    seconds += secondsSince(start);
  }
  void onAttentionInput(int64_t block, const at::Tensor& normed) override {
    const auto start = Clock::now();
    inner_.onAttentionInput(block, normed);
    seconds += secondsSince(start);
  }
  void onMlpInput(int64_t block, const at::Tensor& unnormed) override {  // every call the observer takes
    const auto start = Clock::now();
    inner_.onMlpInput(block, unnormed);
    seconds += secondsSince(start);
  }
  double seconds = 0;

 private:
  model::LayerObserver& inner_;
};

// What made a model's activations non-finite: weights load only when finite, so in a half
// type it is most likely the range; in float32 the model itself (a config value such as a
// zero RoPE theta or a negative norm epsilon, or weights whose products overflow).
std::string nonFiniteCause(runtime::ComputeDtype dtype) {
  if (runtime::isHalfPrecision(dtype))
    return std::string("the run is in ") + runtime::computeDtypeName(dtype) + ": try --dtype float32";
  return std::string("the run is in ") + runtime::computeDtypeName(dtype) + ", so the model's config.json or weights make them (a value such as rms_norm_eps, a RoPE "
         "theta, a soft cap or a scale, or weights whose products overflow)";
}

}  // namespace

std::shared_ptr<const PassModel> loadPassModel(const std::filesystem::path& model_dir, const runtime::DeviceSpec& device,
                                               runtime::ComputeDtype dtype, bool stream_blocks) {
  const auto numerics = model::Numerics::of(dtype, device);
  const auto residency = stream_blocks ? model::WeightResidency::kStreamedBlocks : model::WeightResidency::kResident;
  return std::make_shared<const PassModel>(model::loadModel(model_dir, numerics, residency), numerics);
}

std::shared_ptr<const PassModel> loadPassModel(const PassPlan& plan) {
  return loadPassModel(plan.model_dir, plan.pass.device, plan.pass.dtype, plan.wave_windows > 0);
}

const model::ModelConfig& configOf(const PassModel& model) { return model.model().config(); }

int64_t weightBytesRead(const PassModel& model) { return model.weightBytesRead(); }

struct AnalysisPass::Impl {
  PassPlan plan;
  std::shared_ptr<const PassModel> model;
  anova::Accumulator accumulator;
  int64_t windows = 0;
  TokenHash hash;
  corpus::WindowStats read_stats;
  corpus::TokenStreamStats stream_stats;
  std::filesystem::path layer_dir;  // set: the last wave hands its final layers to files there
  std::vector<std::filesystem::path> layer_files;

  Impl(const PassPlan& p, std::shared_ptr<const PassModel> m)
      : plan(p),
        model(std::move(m)),
        accumulator(p.pass.accumulator, p.pass.seq_len, configOf(*model).hidden_size, model->numerics().device) {}

  model::ForwardRequest request(const WindowBatch& batch) const {
    model::ForwardRequest r;
    r.causal = plan.pass.causal_mask;
    r.last_layer = plan.pass.last_layer;
    // int32 ids in the batch's own memory, widened in one copy.
    r.ids = at::from_blob(const_cast<int32_t*>(batch.ids.data()), {batch.size(), plan.pass.seq_len},
                          at::TensorOptions().dtype(at::kInt))
                .to(at::kLong);
    return r;
  }

  // Hidden states 0..`through` are final: each to its file, its memory released.
  void handLayersThrough(int64_t through) {
    for (const int64_t layer : plan.pass.accumulator.layers) {
      if (layer > through) break;
      auto taken = accumulator.takeLayer(layer);
      if (!taken) continue;
      anova::AnalysisState one;
      one.layers.push_back(std::move(*taken));
      layer_files.push_back(layer_dir / ("layer." + std::to_string(layer) + ".part.safetensors"));
      anova::saveState(one, layer_files.back());
    }
  }
};

AnalysisPass::AnalysisPass(const PassPlan& plan, std::shared_ptr<const PassModel> model)
    : impl_(std::make_unique<Impl>(plan, std::move(model))) {
  if (configOf(*impl_->model).hidden_size != plan.config.hidden_size)
    throw InputError(plan.model_dir.string(), "the loaded model is not the one the pass was planned for");
}

AnalysisPass::~AnalysisPass() {
  std::error_code ignored;  // what is left of them: the state file holds them now, or the run failed
  for (const auto& file : impl_->layer_files) std::filesystem::remove(file, ignored);
}

void AnalysisPass::handLayersTo(const std::filesystem::path& dir) { impl_->layer_dir = dir; }
const std::vector<std::filesystem::path>& AnalysisPass::layerFiles() const { return impl_->layer_files; }

const PassPlan& AnalysisPass::plan() const { return impl_->plan; }
const PassModel& AnalysisPass::model() const { return *impl_->model; }

BatchSeconds AnalysisPass::run(const WindowBatch& batch) {
  const auto start = Clock::now();
  auto request = impl_->request(batch);
  auto& acc = impl_->accumulator;
  std::optional<TimedObserver> timed;
  request.observer = impl_->model->numerics().device.is_cpu() ? &timed.emplace(acc) : static_cast<model::LayerObserver*>(&acc);
  acc.beginBatch(batch.indices, batch.labels, request.ids);
  impl_->model->model().forward(request);
  acc.checkFinite(nonFiniteCause(impl_->plan.pass.dtype));  // the batch's one synchronisation
  return {secondsSince(start), timed ? timed->seconds : 0.0};
}

BatchSeconds AnalysisPass::runWave(const std::vector<WindowBatch>& wave, bool last) {
  const auto start = Clock::now();
  auto& acc = impl_->accumulator;
  std::optional<TimedObserver> timed;
  auto* observer = impl_->model->numerics().device.is_cpu() ? &timed.emplace(acc) : static_cast<model::LayerObserver*>(&acc);
  std::vector<model::ForwardRequest> requests;
  std::vector<anova::Accumulator::BatchState> states;
  for (const auto& batch : wave) {
    requests.push_back(impl_->request(batch));
    requests.back().observer = observer;
    acc.beginBatch(batch.indices, batch.labels, requests.back().ids);
    states.push_back(acc.suspendBatch());
  }
  constexpr auto kNone = static_cast<std::size_t>(-1);
  std::size_t current = kNone;
  auto enter = [&](std::size_t k) {
    if (k == current) return;
    if (current != kNone) states[current] = acc.suspendBatch();
    acc.resumeBatch(std::move(states[k]));
    current = k;
  };
  // A wave may take long: where it is, every 10 s or so.
  int64_t windows = 0;
  for (const auto& batch : wave) windows += batch.size();
  const int64_t blocks = impl_->model->model().config().num_layers;
  auto last_said = Clock::now();
  const bool hand_over = last && !impl_->layer_dir.empty();
  auto after_block = [&](int64_t block) {
    acc.parkThrough(block + 1);  // their sums are done for this wave: on a GPU, to the host
    if (hand_over) impl_->handLayersThrough(block + 1);
    if (secondsSince(last_said) < 10) return;
    last_said = Clock::now();
    log::info("layer-major: block " + std::to_string(block + 1) + " of " + std::to_string(blocks) + " done for a wave of " +
              std::to_string(windows) + " windows");
  };
  impl_->model->model().forwardWave(requests, enter, after_block);
  // The batches' checks in their order: the first with a NaN is named, as run() would.
  for (std::size_t k = 0; k < wave.size(); ++k) {
    enter(k);
    acc.checkFinite(nonFiniteCause(impl_->plan.pass.dtype));
  }
  if (hand_over) impl_->handLayersThrough(INT64_MAX);  // those after the last block run (--layer's last)
  return {secondsSince(start), timed ? timed->seconds : 0.0};
}

BatchSeconds AnalysisPass::forwardOnly(const WindowBatch& batch) const {
  const auto start = Clock::now();
  impl_->model->model().forward(impl_->request(batch));
  return {secondsSince(start), 0.0};
}

StepDecision PassHooks::decide(int64_t windows, bool corpus_ended) {
  const bool stop = stopRequested(windows);
  return {stop || (!corpus_ended && saveDue(windows)), stop, corpus_ended && !stop};
}

void AnalysisPass::runAll(WindowBatches& batches, PassHooks& hooks) {
  const int64_t wave_windows = impl_->plan.wave_windows;
  for (bool ended = false;;) {
    // A step: a batch, or layer-major a wave of them.
    std::vector<WindowBatch> wave;
    int64_t step_windows = 0;
    while (!ended && (wave.empty() || step_windows < wave_windows)) {
      auto batch = batches.next();
      impl_->read_stats = batch.windows_read;
      impl_->stream_stats = batch.stream;
      ended = batches.exhausted() || batch.size() == 0;
      if (batch.size() == 0) break;
      impl_->hash.add(batch.ids);
      step_windows += batch.size();
      wave.push_back(std::move(batch));
    }
    // A full wave is the last when nothing follows it: then each layer is final once its
    // block has run.
    if (wave_windows > 0 && !ended && !wave.empty()) ended = batches.finished();
    if (!wave.empty()) {
      if (wave_windows > 0) runWave(wave, ended);
      else run(wave.front());
      impl_->windows += step_windows;
      hooks.afterBatch(impl_->windows);
    }
    const auto step = hooks.decide(impl_->windows, ended);
    if (step.finished) return;
    if (step.save) hooks.save(impl_->windows);
    if (step.stop) {
      hooks.stopped(impl_->windows);
      return;
    }
  }
}

void AnalysisPass::resumeFrom(const anova::AnalysisState& saved, corpus::WindowSampler& sampler, const std::string& corpus,
                              const std::string& where) {
  // The windows are a function of the corpus and the settings: read past the saved ones
  // again (no forward pass) and check that they are the same tokens.
  for (; impl_->windows < saved.windows; ++impl_->windows) {
    auto window = sampler.next();
    if (!window) throw InputError(corpus, "has fewer windows than the saved run read");
    impl_->hash.add(window->ids);
  }
  if (impl_->hash.hex() != saved.settings["data"].value("token_hash", std::string()))
    throw InputError(corpus, "is not the corpus the saved run read (its tokens differ)");
  impl_->accumulator.restore(saved.layers, where);
  impl_->read_stats = sampler.stats();
}

int64_t AnalysisPass::windows() const { return impl_->windows; }
const TokenHash& AnalysisPass::hash() const { return impl_->hash; }
const corpus::WindowStats& AnalysisPass::windowsRead() const { return impl_->read_stats; }
const corpus::TokenStreamStats& AnalysisPass::streamRead() const { return impl_->stream_stats; }
std::vector<anova::LayerStatistics> AnalysisPass::statistics() const { return impl_->accumulator.statistics(); }
std::vector<anova::LayerStatistics> AnalysisPass::takeStatistics() { return impl_->accumulator.takeStatistics(); }

}  // namespace posgeom::pass
