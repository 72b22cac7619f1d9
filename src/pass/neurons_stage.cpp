#include "posgeom/pass/neurons_stage.h"

#include <chrono>

#include <c10/core/GradMode.h>

#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "pass_model.h"

namespace posgeom::pass {
namespace {

// Block 0's MLP input of each window, [B, T, d] as the model computes it.
class MlpInputCapture final : public model::LayerObserver {
 public:
  void onHidden(int64_t, const at::Tensor&) override {}
  void onMlpInput(int64_t block, const at::Tensor& unnormed) override {
    if (block == 0) captured = unnormed.to(at::kCPU, at::kDouble);
  }
  at::Tensor captured;
};

}  // namespace

bool hasNeuronCircuit(const PassModel& model) { return model.model().neuronCircuit(2).has_value(); }

heads::NeuronAnalysis analyzeNeurons(const PassModel& pass_model, const anova::StateLayers& layers,
                                     const std::vector<heads::HeadReport>& heads,
                                     const std::vector<std::vector<int32_t>>& windows, const heads::NeuronOptions& options) {
  const auto t0 = std::chrono::steady_clock::now();
  const auto& model = pass_model.model();
  const auto found = layers.find(1);
  const auto held = found && layers.shape(*found).attention_inputs ? layers.at(*found) : nullptr;
  const anova::LayerStatistics* block0 = held.get();
  if (!block0 || windows.empty()) throw InputError(option::kNeurons, "needs block 0's heads (--heads with hidden.1 among --layer)");
  const Eigen::MatrixXd means = block0->attention_input_sum / static_cast<double>(block0->sequences);
  const int64_t t = means.rows();
  auto circuit = model.neuronCircuit(t);
  if (!circuit) throw InputError(option::kNeurons, "is not available for model_type '" + model.config().model_type + "'");

  heads::NeuronCircuitMaps maps;
  maps.token_inputs = anova::toEigen(circuit->token_inputs).cast<float>();
  for (int64_t h = 0; h < circuit->wv.size(0); ++h) {
    maps.wv.push_back(anova::toEigen(circuit->wv[h]));
    maps.wo.push_back(anova::toEigen(circuit->wo[h]));
  }
  maps.norm_weight = anova::toEigen(circuit->norm_weight);
  if (circuit->norm_bias.defined()) maps.norm_bias = anova::toEigen(circuit->norm_bias);
  maps.norm_eps = circuit->norm_eps;
  maps.w_in = anova::toEigen(circuit->w_in);
  if (circuit->b_in.defined()) maps.b_in = anova::toEigen(circuit->b_in);
  circuit.reset();

  heads::NeuronWindows sampled;
  sampled.ids = windows;
  std::vector<int64_t> flat;
  for (const auto& w : windows) flat.insert(flat.end(), w.begin(), w.end());
  model::ForwardRequest request;
  request.ids = at::tensor(flat, at::kLong).reshape({static_cast<int64_t>(windows.size()), t});
  request.last_layer = 1;
  MlpInputCapture capture;
  request.observer = &capture;
  {
    const c10::NoGradGuard no_grad;
    model.forward(request);
  }
  if (!capture.captured.defined()) throw InputError(option::kNeurons, "the model gave no MLP input for block 0");
  for (int64_t c = 0; c < capture.captured.size(0); ++c) sampled.mlp_input.push_back(anova::toEigen(capture.captured[c]));
  auto analysis = heads::analyzeNeurons(maps, heads, means, sampled, options);
  log::info(std::to_string(analysis.neurons.size()) + " neurons of block 0 analysed in " +
            log::number("%.1f", std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()) + " s");
  return analysis;
}

}  // namespace posgeom::pass
