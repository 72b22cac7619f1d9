#include "posgeom/train/trainer.h"

#include <ATen/ATen.h>
#include <c10/core/GradMode.h>
#include <ATen/Parallel.h>

#include <chrono>
#include <csignal>
#include <cmath>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <utility>

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/progress.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/runtime/cpu_features.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/model.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/train/memory_estimate.h"
#include "posgeom/train/resume_check.h"
#include "posgeom/train/run_directory.h"
#include "posgeom/train/training_data.h"
#include "posgeom/train/training_log.h"

namespace posgeom::train {
namespace fs = std::filesystem;
namespace {

using Params = std::map<std::string, at::Tensor>;

// posgeom trains GPT-2-architecture models (learned, ALiBi or no positions).
constexpr const char* kTrainedArchitecture = "gpt2";

model::ModelConfig modelConfig(const model::Architecture& arch, const TrainConfig& c, int64_t vocab) {
  model::ModelShape shape;
  shape.layers = c.model.layers;
  shape.hidden_size = c.model.width;
  shape.heads = c.model.heads;
  shape.vocab_size = vocab;
  shape.max_positions = c.model.positions;
  model::ModelConfig m = arch.config_for_shape(shape);
  m.model_type = arch.model_type;
  m.positions = c.model.position_encoding == "alibi" ? model::PositionScheme::kAlibi
                : c.model.position_encoding == "none" ? model::PositionScheme::kNone
                                                      : model::PositionScheme::kLearned;
  if (c.model.dropout > 0 && !arch.supports_dropout)
    throw InputError("train", arch.family + " models take no dropout in posgeom's forward pass");
  return m;
}

bool isBias(const std::string& name) { return name.size() > 5 && name.compare(name.size() - 5, 5, ".bias") == 0; }

// GPT-2's initialisation: N(0, 0.02), residual projections scaled by 1/sqrt(2 layers).
Params initialParams(const model::Architecture& arch, const model::ModelConfig& m, uint64_t seed) {
  at::manual_seed(seed);
  Params params;
  for (const auto& spec : arch.tensors(m)) {
    if (spec.optional) continue;
    at::Tensor t;
    if (spec.init == model::TensorSpec::Init::kOnes) t = at::ones(spec.shape, at::kFloat);
    else if (spec.init == model::TensorSpec::Init::kZeros) t = at::zeros(spec.shape, at::kFloat);
    else {
      const bool residual = spec.name.find("c_proj.weight") != std::string::npos;
      t = at::randn(spec.shape, at::kFloat) * (residual ? 0.02 / std::sqrt(2.0 * static_cast<double>(m.num_layers)) : 0.02);
    }
    params[spec.name] = t;
  }
  return params;
}

struct Optimizer {
  Params m, v;
  int64_t step = 0;  // steps taken
};

void writeTensors(io::SafetensorsWriter& w, const std::string& prefix, const Params& params) {
  for (const auto& [name, t] : params) {
    const auto c = t.detach().contiguous();
    w.add(prefix + name, io::DType::kF32, c.sizes().vec(), c.data_ptr<float>(), static_cast<std::size_t>(c.numel()) * sizeof(float));
  }
}

Params readTensors(const io::SafetensorsFile& f, const std::string& prefix, const Params& like) {
  Params out;
  for (const auto& [name, t] : like) {
    const auto* view = f.find(prefix + name);
    if (!view || view->dtype != io::DType::kF32 || view->shape != t.sizes().vec())
      throw InputError(f.path().string(), "checkpoint lacks '" + prefix + name + "' of the configured shape");
    auto copy = at::empty(t.sizes(), at::kFloat);
    std::memcpy(copy.data_ptr<float>(), view->data, view->nbytes);
    out[name] = copy;
  }
  return out;
}

class Trainer {
 public:
  Trainer(const TrainConfig& c, const TrainOptions& o, std::string corpus_digest)
      : c_(c), numerics_(model::Numerics::of(runtime::ComputeDtype::kFloat32, o.device)), data_(openTrainingData(c.data)), data_description_(data_->describe()),
        arch_(model::architectureFor(kTrainedArchitecture, "train")), config_(modelConfig(arch_, c, data_->vocabSize())),
        corpus_digest_(std::move(corpus_digest)), force_(o.force) {
    requireTrainingMemory(c_, data_->vocabSize(), o.device);
    // A corpus too short for one window is found now, not at the first step.
    data_->batch(false, 1, c_.model.context + 1, c_.run.seed, 0);
    data_->batch(true, 1, c_.model.context + 1, c_.run.seed, 0);
    params_ = initialParams(arch_, config_, c.run.seed);
    for (auto& [name, t] : params_) {
      t = t.to(numerics_.device);
      if (c_.model.bias || !isBias(name)) t.requires_grad_(true);
      opt_.m[name] = at::zeros_like(t);
      opt_.v[name] = at::zeros_like(t);
    }
  }

  std::vector<LogRow> run(RunDirectory& dir, bool resume, int64_t stop_after) {
    if (resume) restore();
    dir.prepare();
    if (!resume) io::writeTextFileAtomically(c_.run.out / "train_config.json", c_.toJson().dump(2) + "\n");
    const StopSignals signals;
    ProgressLine progress("train", c_.optim.iterations, "steps");
    const auto t0 = std::chrono::steady_clock::now();
    const int64_t end = stop_after > 0 ? std::min(stop_after, c_.optim.iterations) : c_.optim.iterations;
    while (opt_.step < end) {
      const int64_t step = opt_.step;
      const double lr = learningRate(c_.optim, step);
      const double loss = trainStep(step, lr);
      LogRow row{step, lr, loss, std::nullopt};
      const bool last = step + 1 == end;
      // Evaluations follow the schedule, not where a run stops, so an interrupted and
      // resumed run logs exactly the same lines.
      if ((step + 1) % c_.run.eval_interval == 0 || step + 1 == c_.optim.iterations) {
        row.validation_loss = validationLoss();
        log::info("step " + std::to_string(step + 1) + ": train loss " + log::number("%.4f", loss) + ", validation loss " +
                  log::number("%.4f", *row.validation_loss));
      }
      log_.push_back(row);
      if (c_.run.save_every > 0 && (step + 1) % c_.run.save_every == 0) saveStep(step + 1);
      const int signal = signals.received();
      if ((step + 1) % c_.run.checkpoint_interval == 0 || last || signal) {
        saveCheckpoint();
        dir.keep();
      }
      progress.update(step + 1, 0, "loss " + std::to_string(loss).substr(0, 6));
      if (signal && !last) {
        progress.finish();
        throw RunStopped(std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " after step " + std::to_string(step + 1) +
                             " of " + std::to_string(c_.optim.iterations) + "; the checkpoint is " +
                             (c_.run.out / "checkpoint.safetensors").string() + "; the same command with --resume" +
                             (force_ ? " instead of --force" : "") + " continues it",
                         128 + signal);
      }
    }
    progress.finish();
    exportModel(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    return log_;
  }

 private:
  std::unique_ptr<model::Model> buildModel() const { return arch_.build(config_, model::Weights(params_), numerics_); }

  at::Tensor lossOn(const model::Model& model, const std::vector<int64_t>& ids, int64_t batch, double dropout) const {
    const int64_t t = c_.model.context;
    const auto all = at::tensor(ids, at::TensorOptions().dtype(at::kLong)).view({batch, t + 1}).to(numerics_.device);
    model::ForwardRequest r;
    r.ids = all.narrow(1, 0, t);
    r.want_logits = true;
    r.dropout = dropout;
    const auto logits = model.forward(r).logits;
    const auto targets = all.narrow(1, 1, t).reshape({-1});
    const auto weights = data_->lossWeights(ids, batch, t + 1);
    if (weights.empty()) return at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets);
    // The mean over the weighted targets only (the answers' tokens).
    const auto w = at::tensor(weights, at::TensorOptions().dtype(at::kFloat)).to(numerics_.device);
    const auto each = at::cross_entropy_loss(logits.reshape({-1, logits.size(-1)}), targets, {}, at::Reduction::None);
    return (each * w).sum() / w.sum().clamp_min(1.0);
  }

  double trainStep(int64_t step, double lr) {
    // Dropout masks depend on (seed, step) only, so a resumed run draws the same ones.
    at::manual_seed(c_.run.seed * 1000003ull + static_cast<uint64_t>(step));
    const auto ids = data_->batch(false, c_.optim.batch_size, c_.model.context + 1, c_.run.seed, step);
    const auto loss = lossOn(*buildModel(), ids, c_.optim.batch_size, c_.model.dropout);
    loss.backward();
    const c10::NoGradGuard no_grad;
    // Each parameter's float32 sum of squares added in float64, in order, as host doubles
    // were: the same norm, and one synchronisation a step instead of one per parameter.
    auto norm_sq = at::zeros({}, at::TensorOptions().dtype(at::kDouble).device(numerics_.device));
    for (auto& [name, p] : params_)
      if (p.grad().defined()) norm_sq.add_(p.grad().pow(2).sum().to(at::kDouble));
    const double norm = std::sqrt(norm_sq.item<double>());
    const double clip = c_.optim.grad_clip > 0 && norm > c_.optim.grad_clip ? c_.optim.grad_clip / (norm + 1e-6) : 1.0;
    const int64_t t = step + 1;
    const double b1 = c_.optim.beta1, b2 = c_.optim.beta2;
    const double c1 = 1.0 - std::pow(b1, static_cast<double>(t)), c2 = 1.0 - std::pow(b2, static_cast<double>(t));
    for (auto& [name, p] : params_) {
      if (!p.grad().defined()) continue;
      const auto g = p.grad() * clip;
      if (p.dim() >= 2 && c_.optim.weight_decay > 0) p.mul_(1.0 - lr * c_.optim.weight_decay);  // AdamW: decoupled
      opt_.m[name].mul_(b1).add_(g, 1.0 - b1);
      opt_.v[name].mul_(b2).addcmul_(g, g, 1.0 - b2);
      p.addcdiv_(opt_.m[name] / c1, (opt_.v[name] / c2).sqrt_().add_(1e-8), -lr);
      p.mutable_grad() = at::Tensor();
    }
    opt_.step = t;
    return loss.item<double>();
  }

  double validationLoss() const {
    const c10::NoGradGuard no_grad;
    const auto model = buildModel();  // the parameters do not change during an evaluation
    double total = 0;
    for (int64_t k = 0; k < c_.run.eval_batches; ++k)
      total += lossOn(*model, data_->batch(true, c_.optim.batch_size, c_.model.context + 1, c_.run.seed, k), c_.optim.batch_size, 0)
                   .item<double>();
    return total / static_cast<double>(c_.run.eval_batches);
  }

  void saveCheckpoint() const {
    io::SafetensorsWriter w;
    writeTensors(w, "param.", params_);
    writeTensors(w, "adam_m.", opt_.m);
    writeTensors(w, "adam_v.", opt_.v);
    nlohmann::json meta{{"step", opt_.step}, {"config", c_.toJson()}, {"threads", at::get_num_threads()}};
    if (!corpus_digest_.empty()) meta["corpus_digest"] = corpus_digest_;
    w.setMetadata("posgeom_train", meta.dump());
    w.write(c_.run.out / "checkpoint.safetensors");
    io::writeTextFileAtomically(c_.run.out / "train_log.csv", logCsv(log_));
  }

  // The checkpoint checkResumable accepted.
  void restore() {
    const auto path = c_.run.out / "checkpoint.safetensors";
    const auto f = io::SafetensorsFile::open(path);
    const auto meta = nlohmann::json::parse(f.metadata().at("posgeom_train"));
    const c10::NoGradGuard no_grad;
    const auto params = readTensors(f, "param.", params_);
    for (auto& [name, p] : params_) p.copy_(params.at(name));
    opt_.m = readTensors(f, "adam_m.", opt_.m);
    opt_.v = readTensors(f, "adam_v.", opt_.v);
    opt_.step = meta["step"].get<int64_t>();
    std::ifstream in(c_.run.out / "train_log.csv");
    std::stringstream buffer;
    buffer << in.rdbuf();
    log_ = parseLog(buffer.str());
    log_.resize(static_cast<std::size_t>(std::min<int64_t>(opt_.step, static_cast<int64_t>(log_.size()))));
    log::info("resuming at step " + std::to_string(opt_.step) + " of " + std::to_string(c_.optim.iterations));
  }

  // The model as it is now, in Hugging Face layout: config.json, model.safetensors,
  // tokenizer.json, and what it was trained with (train_config.json, training.json).
  void writeModel(const fs::path& dir, std::optional<double> seconds) const {
    io::SafetensorsWriter w;
    writeTensors(w, "", params_);
    w.setMetadata("format", "pt");
    w.write(dir / "model.safetensors");
    io::writeTextFileAtomically(dir / "config.json", arch_.to_config_json(config_).dump(2) + "\n");
    io::writeTextFileAtomically(dir / "tokenizer.json", data_->tokenizerJson().dump(1) + "\n");
    const auto validation_loss = lastValidationLoss(log_);
    nlohmann::json training{{"data", data_description_},
                            {"steps", opt_.step},
                            {"final_train_loss", log_.back().train_loss},
                            // null before the first evaluation
                            {"final_validation_loss", validation_loss ? nlohmann::json(*validation_loss) : nlohmann::json()},
                            {"threads", at::get_num_threads()},
                            {"parameters", parameterCount()}};
    // The machine it ran on: the CPU's vector features choose the kernels, and so the sums' order.
    const auto& cpu = runtime::thisCpu();
    training["cpu"] = {{"model", cpu.model}, {"features", cpu.features}};
    if (seconds) training["seconds"] = *seconds;
    io::writeTextFileAtomically(dir / "training.json", training.dump(2) + "\n");
  }

  void exportModel(double seconds) const {
    writeModel(c_.run.out, seconds);
    io::writeTextFileAtomically(c_.run.out / "train_log.csv", logCsv(log_));
  }

  // step_<k>/ of the series, written beside and renamed into place: a killed run leaves
  // no half-written step (a resumed one writes the same step again).
  void saveStep(int64_t step) const {
    const auto dir = c_.run.out / ("step_" + std::to_string(step));
    const auto partial = c_.run.out / (".step_" + std::to_string(step) + ".partial");
    fs::remove_all(partial);
    fs::create_directories(partial);
    writeModel(partial, std::nullopt);
    io::writeTextFileAtomically(partial / "train_config.json", c_.toJson().dump(2) + "\n");
    fs::remove_all(dir);
    fs::rename(partial, dir);
  }

  int64_t parameterCount() const {
    int64_t n = 0;
    for (const auto& [name, p] : params_) n += p.numel();
    return n;
  }

  TrainConfig c_;
  model::Numerics numerics_;
  std::unique_ptr<TrainingData> data_;
  nlohmann::json data_description_;  // sizes and the unigram baseline: once, not at every saved step
  const model::Architecture& arch_;
  model::ModelConfig config_;
  std::string corpus_digest_;       // recorded in the checkpoint: a resume must read the same corpus
  bool force_;                      // for the message of a stop: --resume replaces --force
  Params params_;
  Optimizer opt_;
  std::vector<LogRow> log_;
};

}  // namespace

std::optional<double> lastValidationLoss(const std::vector<LogRow>& log) {
  for (auto r = log.rbegin(); r != log.rend(); ++r)
    if (r->validation_loss) return r->validation_loss;
  return std::nullopt;
}

std::vector<LogRow> runTraining(const TrainConfig& config, const TrainOptions& options) {
  if (options.resume && options.force)
    throw InputError(option::kForce, "starts the run in --out over and --resume continues it: give one of them");
  runtime::requireDevice(options.device);
  runtime::selectCudaDevice(options.device);  // before the memory query, which asks the current GPU
  // The fewest ids any corpus can have: the real vocabulary is checked again once read.
  requireTrainingMemory(config, config.data.task == "addition" ? 13 : config.data.tokens == "bytes" ? 256 : 2, options.device);
  RunDirectory dir(config.run.out, options.resume ? RunMode::kResume : options.force ? RunMode::kForce : RunMode::kNew);
  auto corpus_digest = corpusDigest(config.data);
  if (options.resume) {
    const int64_t step = checkResumable(config, dir.checkpoint(), corpus_digest);
    // It would re-export the checkpoint's model and say it trained: nothing to do is asked.
    if (options.stop_after > 0 && options.stop_after <= step)
      throw InputError(option::kStopAfter, std::to_string(options.stop_after) + " is not past step " + std::to_string(step) +
                                           ", where the checkpoint " + dir.checkpoint().string() +
                                           " resumes: give --stop-after " + std::to_string(step + 1) + " or more, or leave it out");
  }
  Trainer trainer(config, options, std::move(corpus_digest));
  return trainer.run(dir, options.resume, options.stop_after);
}

}  // namespace posgeom::train
