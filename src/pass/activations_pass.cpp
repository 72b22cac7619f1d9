#include "posgeom/pass/activations_pass.h"

#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/io/dtype.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/pass/memory_estimate.h"
#include "posgeom/pass/plan.h"

namespace posgeom::pass {

anova::AnalysisState analyzeActivations(const AnalyzeOptions& o) {
  const auto& path = o.activations;
  const auto file = io::SafetensorsFile::open(path);
  std::vector<std::pair<int64_t, at::Tensor>> per_layer;  // [N, T, d] each
  auto floating = [&](const io::TensorView& v, const std::string& name) {
    if (!io::isFloating(v.dtype))
      throw InputError(path.string(), "'" + name + "' is " + std::string(io::dtypeName(v.dtype)) +
                                          ": hidden states must be a floating-point dtype");
  };
  if (const auto* all = file.find("hidden")) {
    floating(*all, "hidden");
    if (all->shape.size() != 4) throw InputError(path.string(), "'hidden' must be [L, N, T, d]");
    const auto t = model::tensorFromView(*all);
    for (int64_t l = 0; l < all->shape[0]; ++l) per_layer.emplace_back(l, t[l]);
  } else {
    for (int64_t l = 0;; ++l) {
      const auto* v = file.find("hidden." + std::to_string(l));
      if (!v) break;
      if (v->shape.size() != 3) throw InputError(path.string(), "'hidden." + std::to_string(l) + "' must be [N, T, d]");
      floating(*v, "hidden." + std::to_string(l));
      per_layer.emplace_back(l, model::tensorFromView(*v));
    }
  }
  if (per_layer.empty()) throw InputError(path.string(), "holds neither 'hidden' nor 'hidden.0'");
  const auto& first = per_layer.front().second;
  for (const auto& [l, t] : per_layer)
    if (t.sizes() != first.sizes()) throw InputError(path.string(), "layers differ in shape");
  const int64_t n = first.size(0), seq_len = first.size(1), dim = first.size(2);
  if (o.skip_first >= seq_len) throw InputError("--skip-first", "leaves no positions of the " + std::to_string(seq_len));
  checkScreeNotFits(o.report, seq_len - o.skip_first, dim);
  anova::AccumulatorOptions options;
  options.layers = resolveLayers(o.layers, static_cast<int64_t>(per_layer.size()));
  options.skip_first = o.skip_first;
  options.second_moment = o.second_moment;
  options.caps = o.caps;
  anova::Accumulator acc(options, seq_len, dim, at::kCPU);
  const int64_t batch_size = o.batch_size > 0 ? o.batch_size : preferredBatch(runtime::DeviceSpec{}, seq_len);
  for (int64_t start = 0; start < n; start += batch_size) {
    const int64_t b = std::min(batch_size, n - start);
    std::vector<int64_t> windows(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; ++i) windows[static_cast<size_t>(i)] = start + i;
    acc.beginBatch(windows, std::vector<std::string>(static_cast<size_t>(b)));
    for (const auto& [l, t] : per_layer) acc.onHidden(l, t.narrow(0, start, b));
    acc.checkFinite();
  }
  anova::AnalysisState state;
  state.settings = {{"tool", "posgeom"},
                    {"source", "activations"},
                    {"activations", path.string()},
                    {"seq_len", seq_len},
                    {"skip_first", o.skip_first},
                    {"dim", dim}};
  state.settings["data"] = {{"windows", n}};
  state.windows = n;
  state.layers = acc.statistics();
  return state;
}

}  // namespace posgeom::pass
