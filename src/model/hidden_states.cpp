#include "posgeom/model/hidden_states.h"

#include <ATen/CPUGeneratorImpl.h>
#include <c10/core/GradMode.h>

#include <cstring>

#include "posgeom/base/byte_size.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/base/progress.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/loader.h"
#include "posgeom/model/load/weights.h"

namespace posgeom::model {
namespace {

at::Tensor readInputIds(const std::filesystem::path& path) {
  const auto file = io::SafetensorsFile::open(path);
  const auto* view = file.find("input_ids");
  if (!view) throw InputError(path.string(), "no tensor named 'input_ids'");
  if (view->dtype != io::DType::kI64 && view->dtype != io::DType::kI32)
    throw InputError(path.string(), "input_ids must be I64 or I32, not " + std::string(io::dtypeName(view->dtype)));
  if (view->shape.size() != 2) throw InputError(path.string(), "input_ids must have shape [B,T]");
  return tensorFromView(*view).to(at::kLong).clone();
}

// --random-ids B,T checked against the model before a single id is made.
void checkRandomShape(const HiddenStatesRequest& job, const ModelConfig& config) {
  if (job.random_batch <= 0 || job.random_len <= 0)
    throw InputError(option::kRandomIds, std::to_string(job.random_batch) + "," + std::to_string(job.random_len) +
                                         ": B (sequences) and T (tokens each) must both be positive");
  if (config.learnedPositions() && config.max_positions > 0 && job.random_len > config.max_positions)
    throw InputError(option::kRandomIds, "T = " + std::to_string(job.random_len) + " exceeds the model's " +
                                         std::to_string(config.max_positions) + " positions");
}

// What forward keeps on the host (every output in float32, and the ids) must fit in the
// memory free, or the run would end in an allocator's "internal error" or the OOM killer.
void checkOutputsFit(const Model& model, int64_t batch, int64_t len, bool logits, const std::string& where) {
  const auto& c = model.config();
  using Bytes = long double;
  const Bytes tokens = static_cast<Bytes>(batch) * static_cast<Bytes>(len);
  const Bytes hidden = tokens * 4 * static_cast<Bytes>(c.hidden_size) * static_cast<Bytes>(model.numHiddenStates() + 1);
  const Bytes logit_bytes = logits ? tokens * 4 * static_cast<Bytes>(c.vocab_size) : 0;
  const Bytes need = hidden + logit_bytes + tokens * 8;
  const auto free = availableHostMemory();
  if (!free || need <= static_cast<Bytes>(*free)) return;
  const auto bytes = [](Bytes b) { return formatByteEstimate(b); };
  throw InputError(where, std::to_string(batch) + " x " + std::to_string(len) + " ids give " + bytes(need) +
                              " of outputs to hold in memory (hidden states " + bytes(hidden) +
                              (logits ? ", logits " + bytes(logit_bytes) : std::string()) + "), and " + bytes(*free) +
                              " is free; give fewer ids" + (logits ? ", or leave the logits out with --no-logits" : ""));
}

// The model checks the ids of each few sequences it runs; all of them here, before the first.
void checkIds(const at::Tensor& ids, const ModelConfig& config, const std::string& file) {
  if (ids.numel() == 0) throw InputError(file, "input_ids holds no tokens");
  const auto lo = ids.min().item<int64_t>(), hi = ids.max().item<int64_t>();
  if (lo < 0 || hi >= config.vocab_size)
    throw InputError(file, "input_ids: token id " + std::to_string(lo < 0 ? lo : hi) + " is outside the vocabulary of " +
                                      std::to_string(config.vocab_size));
}

at::Tensor randomIds(const HiddenStatesRequest& job, int64_t vocab_size) {
  auto gen = at::detail::createCPUGenerator(job.seed);
  return at::randint(vocab_size, {job.random_batch, job.random_len}, gen, at::TensorOptions().dtype(at::kLong));
}

// What the outputs are written in: float32, but for a float64 run's (its digits kept).
at::ScalarType outputDtype(const HiddenStatesRequest& job) {
  return job.dtype == runtime::ComputeDtype::kFloat64 ? at::kDouble : at::kFloat;
}

// A NaN or Inf output is no result: the first one found stops the run, nothing written.
void requireFinite(const at::Tensor& t, const std::string& name, const HiddenStatesRequest& job) {
  if (at::isfinite(t).all().item<bool>()) return;
  const std::string cause = !runtime::isHalfPrecision(job.dtype)
                                ? "this model's config or weights make its forward non-finite"
                                : std::string("in ") + runtime::computeDtypeName(job.dtype) +
                                      "; try --dtype float32, and if it stays, this model's config or weights make its forward non-finite";
  throw InputError(job.model_dir.string(), name + " (the first non-finite output) holds NaN or Inf: " + cause + "; nothing written");
}

// Copies each hidden state of the sequences [from, from + n) into its rows of the whole
// [B,T,d] output (float32; float64 in a float64 run), checking it on the way.
class HiddenCollector final : public LayerObserver {
 public:
  HiddenCollector(const HiddenStatesRequest& job, int64_t layers, int64_t batch, int64_t len, int64_t width, ProgressLine& progress)
      : job_(job), progress_(progress), hidden_(static_cast<size_t>(layers)) {
    for (auto& h : hidden_) h = at::empty({batch, len, width}, outputDtype(job));
  }
  void setRows(int64_t from, int64_t n) {
    from_ = from;
    n_ = n;
  }
  void onHidden(int64_t layer, const at::Tensor& hidden) override {
    requireFinite(hidden, "hidden." + std::to_string(layer), job_);
    rows(hidden_[static_cast<size_t>(layer)]).copy_(hidden);
    progress_.update(from_, from_ * hidden.size(1), "hidden." + std::to_string(layer));
  }
  at::Tensor rows(const at::Tensor& whole) const { return whole.narrow(0, from_, n_); }
  std::vector<at::Tensor>& hidden() { return hidden_; }

 private:
  const HiddenStatesRequest& job_;
  ProgressLine& progress_;
  std::vector<at::Tensor> hidden_;
  int64_t from_ = 0, n_ = 0;
};

// No copy: the writer reads the tensor (which the lambda keeps alive) when it writes.
void addTensor(io::SafetensorsWriter& writer, const std::string& name, const at::Tensor& t) {
  const bool wide = t.scalar_type() == at::kDouble;
  const auto c = t.to(at::kCPU, wide ? at::kDouble : at::kFloat).contiguous();
  writer.addDeferred(name, wide ? io::DType::kF64 : io::DType::kF32, c.sizes().vec(),
                     [c](std::byte* out) { std::memcpy(out, c.data_ptr(), static_cast<size_t>(c.nbytes())); });
}

}  // namespace

std::string collectHiddenStates(const HiddenStatesRequest& job, io::SafetensorsWriter& writer) {
  const bool random = job.ids_path.empty();
  if (random) checkRandomShape(job, loadModelConfig(job.model_dir));
  const auto numerics = Numerics::of(job.dtype, job.device);
  const auto loaded = loadModel(job.model_dir, numerics);
  const auto& model = *loaded.model;
  const bool logits = job.logits && model.hasLmHead();
  at::Tensor ids;
  if (random) {
    checkOutputsFit(model, job.random_batch, job.random_len, logits, option::kRandomIds);
    ids = randomIds(job, model.config().vocab_size);
  } else {
    ids = readInputIds(job.ids_path);
    checkIds(ids, model.config(), job.ids_path.string());
    checkOutputsFit(model, ids.size(0), ids.size(1), logits, job.ids_path.string());
  }
  const int64_t batch = ids.size(0), len = ids.size(1), width = model.config().hidden_size;

  const c10::NoGradGuard no_grad;
  ProgressLine progress("forward", batch, "sequences");
  HiddenCollector collector(job, model.numHiddenStates(), batch, len, width, progress);
  at::Tensor final_norm, all_logits;  // [B,T,*] float32, made by the first part that has them
  const auto keep = [&](at::Tensor& whole, const at::Tensor& part, const char* name) {
    if (!part.defined()) return;
    requireFinite(part, name, job);
    if (!whole.defined()) whole = at::empty({batch, len, part.size(2)}, outputDtype(job));
    collector.rows(whole).copy_(part);
  };
  ForwardRequest request;
  if (job.causal) request.causal = true;
  request.want_final_norm = model.hasFinalNorm();
  request.want_logits = logits;
  request.observer = &collector;
  // A few sequences at a time: enough tokens to keep the device busy, and a progress line.
  const int64_t rows = std::max<int64_t>(1, (job.device.isCuda() ? 32768 : 2048) / std::max<int64_t>(1, len));
  for (int64_t from = 0; from < batch; from += rows) {
    const int64_t n = std::min(rows, batch - from);
    collector.setRows(from, n);
    request.ids = ids.narrow(0, from, n);
    const auto out = model.forward(request);
    keep(final_norm, out.final_norm, "final_norm");
    keep(all_logits, out.logits, "logits");
    progress.update(from + n, (from + n) * len);
  }
  progress.finish();

  auto& hidden = collector.hidden();
  if (job.final_norm_last && final_norm.defined()) hidden.back() = final_norm;
  for (size_t l = 0; l < hidden.size(); ++l) addTensor(writer, "hidden." + std::to_string(l), hidden[l]);
  if (final_norm.defined()) addTensor(writer, "final_norm", final_norm);
  if (all_logits.defined()) addTensor(writer, "logits", all_logits);
  writer.setMetadata("model", loaded.dir.string());
  writer.setMetadata("compute", numerics.describe());
  writer.setMetadata("causal", request.causal.value_or(!model.config().bidirectional) ? "true" : "false");
  return std::to_string(hidden.size()) + " hidden states of shape [" + std::to_string(batch) + ", " + std::to_string(len) +
         ", " + std::to_string(width) + "]" + (job.logits || !model.hasLmHead() ? "" : " (no logits)");
}

void writeHiddenStates(const HiddenStatesRequest& job) {
  io::SafetensorsWriter writer;
  const auto what = collectHiddenStates(job, writer);
  writer.write(job.out_path);
  log::info("wrote " + what + " to " + job.out_path.string());
}

}  // namespace posgeom::model
