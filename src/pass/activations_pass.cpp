#include "posgeom/pass/activations_pass.h"

#include <map>

#include "posgeom/anova/accumulator.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/io/dtype.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/model/load/weights.h"
#include "posgeom/pass/memory_estimate.h"
#include "posgeom/pass/plan.h"

namespace posgeom::pass {
namespace {

using Layers = std::vector<std::pair<int64_t, at::Tensor>>;  // [N, T, d] each

// l of "hidden.<l>" written as forward writes it (0, 1, ... without sign or leading zero); -1 otherwise.
int64_t hiddenIndex(const std::string& suffix) {
  if (suffix.empty() || suffix.size() > 9 || (suffix.size() > 1 && suffix[0] == '0')) return -1;
  for (const char c : suffix)
    if (c < '0' || c > '9') return -1;
  return std::stoll(suffix);
}

std::string sequenceOf(const std::vector<int64_t>& indices) {
  std::string s;
  for (std::size_t i = 0; i < indices.size() && i < 4; ++i) s += (i ? ", hidden." : "hidden.") + std::to_string(indices[i]);
  return indices.size() > 4 ? s + ", ..." : s;
}

// The hidden.<l> tensors, numbered 0, 1, 2, ... . A gap or a name that is not such a number
// is refused: which hidden state the tensors after a gap are, or what "hidden.01" is, would
// be a guess, and analysing up to the gap drops layers without a word.
std::map<int64_t, const io::TensorView*> numberedLayers(const io::SafetensorsFile& file, const std::string& where) {
  std::map<int64_t, const io::TensorView*> numbered;
  for (const auto& [name, view] : file.tensors()) {
    if (name.rfind("hidden.", 0) != 0) continue;
    const int64_t l = hiddenIndex(name.substr(7));
    if (l < 0)
      throw InputError(where, "'" + name + "' is not a hidden state's name: they are hidden.0, hidden.1, ... (no sign or "
                                            "leading zero), as forward writes them");
    numbered.emplace(l, &view);
  }
  std::vector<int64_t> present;
  for (const auto& [l, v] : numbered) present.push_back(l);
  for (int64_t l = 0; l < static_cast<int64_t>(present.size()); ++l)
    if (present[static_cast<std::size_t>(l)] != l) {
      if (l == 0 && !numbered.empty() && !file.find("hidden"))
        throw InputError(where, "holds neither 'hidden' nor 'hidden.0' (it has " + sequenceOf(present) + ")");
      std::vector<int64_t> after(present.begin() + l, present.end());
      throw InputError(where, "has no 'hidden." + std::to_string(l) + "' but has " + sequenceOf(after) +
                                  ": the hidden states must be numbered 0, 1, 2, ... without a gap");
    }
  return numbered;
}

Layers readLayers(const io::SafetensorsFile& file, const std::string& where) {
  auto floating = [&](const io::TensorView& v, const std::string& name) {
    if (!io::isFloating(v.dtype))
      throw InputError(where, "'" + name + "' is " + std::string(io::dtypeName(v.dtype)) +
                                  ": hidden states must be a floating-point dtype");
  };
  const auto numbered = numberedLayers(file, where);
  Layers layers;
  if (const auto* all = file.find("hidden")) {
    if (!numbered.empty()) throw InputError(where, "holds both 'hidden' and 'hidden.<l>' tensors: which to analyse would be a guess");
    floating(*all, "hidden");
    if (all->shape.size() != 4) throw InputError(where, "'hidden' must be [L, N, T, d]");
    const auto t = model::tensorFromView(*all);
    for (int64_t l = 0; l < all->shape[0]; ++l) layers.emplace_back(l, t[l]);
    if (layers.empty()) throw InputError(where, "'hidden' has shape " + io::shapeToString(all->shape) + ": no hidden states (L = 0)");
    return layers;
  }
  for (const auto& [l, v] : numbered) {
    const auto name = "hidden." + std::to_string(l);
    if (v->shape.size() != 3) throw InputError(where, "'" + name + "' must be [N, T, d]");
    floating(*v, name);
    layers.emplace_back(l, model::tensorFromView(*v));
  }
  if (layers.empty()) throw InputError(where, "holds neither 'hidden' nor 'hidden.0'");
  return layers;
}

// Why the norms of hidden state `layer` in sequences [start, start + count) are not finite:
// the file holds NaN or Inf, or finite values too large to square in the batch's reduction.
[[noreturn]] void throwNonFinite(const std::string& where, const Layers& layers, int64_t layer, int64_t start, int64_t count) {
  const auto slice = layers[static_cast<std::size_t>(layer)].second.narrow(0, start, count);
  const std::string at = "hidden state " + std::to_string(layer) + " (in sequences " + std::to_string(start) + ".." +
                         std::to_string(start + count - 1) + ")";
  if (!at::isfinite(slice).all().item<bool>()) throw InputError(where, "holds NaN or Inf at " + at);
  const double largest = slice.abs().max().item<double>();
  throw InputError(where, "holds values up to " + log::number("%.3g", largest) +
                              " at " + at + ": finite, but their squares overflow float32 (the statistics need |x| "
                                            "well below 1e19); scale the hidden states down");
}

}  // namespace

anova::AnalysisState analyzeActivations(const AnalyzeOptions& o) {
  const auto& path = o.activations;
  const auto file = io::SafetensorsFile::open(path);
  const auto per_layer = readLayers(file, path.string());
  const auto& first = per_layer.front().second;
  for (const auto& [l, t] : per_layer)
    if (t.sizes() != first.sizes()) throw InputError(path.string(), "layers differ in shape");
  const int64_t n = first.size(0), seq_len = first.size(1), dim = first.size(2);
  const auto shape = io::shapeToString({static_cast<int64_t>(per_layer.size()), n, seq_len, dim});
  if (n == 0) throw InputError(path.string(), "holds no sequences: its hidden states are " + shape + " [L, N, T, d], N = 0");
  if (dim == 0) throw InputError(path.string(), "its hidden states are " + shape + " [L, N, T, d]: d = 0, no features");
  if (o.skip_first >= seq_len) throw InputError(option::kSkipFirst, "leaves no positions of the " + std::to_string(seq_len));
  fitReportOptions(o.report, seq_len - o.skip_first, dim);  // a given --screenot-k that does not fit, before the work
  if (n == 1) log::warn(path.string() + ": " + singleWindowWarning());
  anova::AccumulatorOptions options;
  options.layers = resolveLayers(o.layers, static_cast<int64_t>(per_layer.size()));
  options.skip_first = o.skip_first;
  options.second_moment = o.second_moment;
  options.layer_cosines = o.layer_cosines;  // every layer of a batch comes in turn, as from a model
  options.caps = o.caps;
  anova::Accumulator acc(options, seq_len, dim, at::kCPU);
  const int64_t batch_size = o.batch_size > 0 ? o.batch_size : preferredBatch(runtime::DeviceSpec{}, seq_len);
  for (int64_t start = 0; start < n; start += batch_size) {
    const int64_t b = std::min(batch_size, n - start);
    std::vector<int64_t> windows(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; ++i) windows[static_cast<size_t>(i)] = start + i;
    acc.beginBatch(windows, std::vector<std::string>(static_cast<size_t>(b)));
    for (const auto& [l, t] : per_layer) acc.onHidden(l, t.narrow(0, start, b));
    if (const auto bad = acc.firstNonFinite()) throwNonFinite(path.string(), per_layer, *bad, start, b);
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
