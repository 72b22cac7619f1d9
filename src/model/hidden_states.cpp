#include "posgeom/model/hidden_states.h"

#include <ATen/CPUGeneratorImpl.h>

#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/io/safetensors_writer.h"
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

at::Tensor randomIds(const HiddenStatesRequest& job, int64_t vocab_size) {
  if (job.random_len <= 0) throw InputError("--random-ids", "sequence length must be positive");
  auto gen = at::detail::createCPUGenerator(job.seed);
  return at::randint(vocab_size, {job.random_batch, job.random_len}, gen, at::TensorOptions().dtype(at::kLong));
}

// Keeps every hidden state, as float32 on the host: `forward` is for small inputs.
class HiddenCollector final : public LayerObserver {
 public:
  void onHidden(int64_t layer, const at::Tensor& hidden) override {
    hidden_.resize(static_cast<size_t>(layer) + 1);
    hidden_[static_cast<size_t>(layer)] = hidden.to(at::kCPU, at::kFloat).contiguous();
  }
  std::vector<at::Tensor>& hidden() { return hidden_; }

 private:
  std::vector<at::Tensor> hidden_;
};

void addTensor(io::SafetensorsWriter& writer, const std::string& name, const at::Tensor& t) {
  const auto c = t.to(at::kCPU, at::kFloat).contiguous();
  writer.add(name, io::DType::kF32, c.sizes().vec(), c.data_ptr(), static_cast<size_t>(c.nbytes()));
}

}  // namespace

void writeHiddenStates(const HiddenStatesRequest& job) {
  const auto numerics = Numerics::of(job.dtype, job.device);
  const auto loaded = loadModel(job.model_dir, numerics);
  const auto& model = *loaded.model;
  const auto ids = job.random_batch > 0 ? randomIds(job, model.config().vocab_size) : readInputIds(job.ids_path);
  HiddenCollector collector;
  ForwardRequest request;
  request.ids = ids;
  if (job.causal) request.causal = true;
  request.want_final_norm = model.hasFinalNorm();
  request.want_logits = model.hasLmHead();
  request.observer = &collector;
  const auto out = model.forward(request);

  auto& hidden = collector.hidden();
  if (job.final_norm_last && out.final_norm.defined()) hidden.back() = out.final_norm;
  io::SafetensorsWriter writer;
  for (size_t l = 0; l < hidden.size(); ++l) addTensor(writer, "hidden." + std::to_string(l), hidden[l]);
  if (out.final_norm.defined()) addTensor(writer, "final_norm", out.final_norm);
  if (out.logits.defined()) addTensor(writer, "logits", out.logits);
  writer.setMetadata("model", loaded.dir.string());
  writer.setMetadata("compute", numerics.describe());
  writer.setMetadata("causal", request.causal.value_or(!model.config().bidirectional) ? "true" : "false");
  writer.write(job.out_path);
  log::info("wrote " + std::to_string(hidden.size()) + " hidden states of shape [" + std::to_string(ids.size(0)) + ", " +
            std::to_string(ids.size(1)) + ", " + std::to_string(model.config().hidden_size) + "] to " + job.out_path.string());
}

}  // namespace posgeom::model
