#include "accumulator_binding.h"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>

#include "bindings.h"
#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/pass/options.h"
#include "python_values.h"
#include "state_binding.h"
#include "tensor_view.h"
#include "windows_binding.h"

namespace posgeom::python {
namespace {

std::string shapeText(const at::Tensor& t) {
  std::string s = "[";
  for (int64_t i = 0; i < t.dim(); ++i) s += (i ? ", " : "") + std::to_string(t.size(i));
  return s + "]";
}

// The hidden states of one add(): a sequence of [B, T, d] by hidden-state index (what
// transformers' output_hidden_states gives), one [L, B, T, d] array, or one [B, T, d].
std::vector<TensorView> hiddenViews(nb::handle hidden, int64_t expected, const std::string& name = "hidden") {
  std::vector<TensorView> views;
  if (nb::isinstance<nb::list>(hidden) || nb::isinstance<nb::tuple>(hidden)) {
    std::size_t i = 0;
    for (nb::handle item : hidden) {
      views.push_back(tensorView(item, name + "[" + std::to_string(i) + "]"));
      if (views.back().tensor.dim() != 3)
        throw InputError(name + "[" + std::to_string(i) + "]", "has shape " + shapeText(views.back().tensor) + ": each hidden state is [batch, T, d]");
      ++i;
    }
    return views;
  }
  auto view = tensorView(hidden, name);
  if (view.tensor.dim() == 4) {
    for (int64_t l = 0; l < view.tensor.size(0); ++l) views.push_back({view.array, view.tensor[l]});
    return views;
  }
  if (view.tensor.dim() != 3)
    throw InputError(name, "has shape " + shapeText(view.tensor) + ": give [batch, T, d], [L, batch, T, d] or a sequence of [batch, T, d]");
  if (expected != 1)
    throw InputError(name, "is one hidden state [batch, T, d]; this accumulator takes " + std::to_string(expected) +
                                   " (give [L, batch, T, d] or a sequence of them)");
  views.push_back(std::move(view));
  return views;
}

}  // namespace

PyAccumulator::PyAccumulator(anova::AccumulatorOptions options, int64_t seq_len, int64_t dim, int64_t hidden_states,
                             nlohmann::json settings, std::optional<at::Device> device)
    : options_(std::move(options)), seq_len_(seq_len), dim_(dim), hidden_states_(hidden_states),
      settings_(std::move(settings)), device_(device) {
  if (seq_len_ < 2) throw InputError("num_positions", "must be a whole number >= 2 (got " + std::to_string(seq_len_) + ")");
  if (dim_ <= 0) throw InputError("dim", "must be positive, not " + std::to_string(dim_));
  if (options_.skip_first < 0) throw InputError("skip_first", "must be 0 or more, not " + std::to_string(options_.skip_first));
  if (options_.skip_first >= seq_len_) throw InputError("skip_first", "leaves no positions of the " + std::to_string(seq_len_));
  // The second moments (two d x d float64 matrices a layer) before anything is allocated.
  const double bytes = 16.0 * static_cast<double>(dim_) * static_cast<double>(dim_) * static_cast<double>(options_.layers.size());
  const auto available = availableHostMemory();
  if (options_.second_moment && available && bytes > static_cast<double>(*available))
    throw InputError("dim", std::to_string(dim_) + " needs " + log::number("%.1f", bytes / (1 << 30)) + " GiB of second moments for " +
                                std::to_string(options_.layers.size()) + " hidden states, more than this machine has free; "
                                "pass second_moment=False, or fewer layers");
  if (options_.layers.empty()) throw InputError("layers", "names no hidden state");
}

anova::Accumulator& PyAccumulator::on(const at::Device& device) {
  // "cuda" (no index) is whichever GPU the first batch is on.
  if (!device_ || (device_->is_cuda() && !device_->has_index() && device.is_cuda())) device_ = device;
  if (*device_ != device)
    throw InputError("hidden", "is on " + device.str() + "; this accumulator reduces on " + device_->str() +
                                   " (one device per accumulator: merge accumulators of different devices)");
  if (!accumulator_) accumulator_ = std::make_unique<anova::Accumulator>(options_, seq_len_, dim_, *device_);
  return *accumulator_;
}

void PyAccumulator::requireUsable() const {
  if (!refused_.empty())
    throw InputError("Accumulator", "holds part of a refused batch (" + refused_ + "): its sums are no run's; start a new one");
}

namespace {

template <typename T>
std::vector<T> listArgument(nb::handle value, const char* name, const char* of) {
  std::vector<T> out;
  if (!nb::try_cast(value, out)) throw InputError(name, "must be a sequence of " + std::string(of) + ", not " + typeName(value));
  return out;
}

}  // namespace

void PyAccumulator::add(nb::handle hidden, nb::handle batch, nb::handle labels_arg, nb::handle windows_arg,
                        nb::handle attention_arg) {
  requireUsable();
  const int64_t largest = *options_.layers.rbegin();
  // One [batch, T, d]: when the accumulator takes hidden state 0 alone.
  auto views = hiddenViews(hidden, hidden_states_ > 0 ? hidden_states_ : largest + 1);
  const auto given = static_cast<int64_t>(views.size());
  if (hidden_states_ > 0 ? given != hidden_states_ : given <= largest)
    throw InputError("hidden", "gives " + std::to_string(given) + " hidden states; this accumulator takes " +
                                   (hidden_states_ > 0 ? std::to_string(hidden_states_) : "hidden state " + std::to_string(largest) + " and those before it"));
  const auto& first = views.front().tensor;
  const int64_t b = first.size(0);
  for (int64_t l = 0; l < given; ++l) {
    const auto& t = views[static_cast<std::size_t>(l)].tensor;
    if (t.size(0) != b || t.size(1) != seq_len_ || t.size(2) != dim_)
      throw InputError("hidden", "hidden state " + std::to_string(l) + " is " + shapeText(t) + "; this accumulator takes [batch, " +
                                     std::to_string(seq_len_) + ", " + std::to_string(dim_) + "] (the same batch in every one)");
    if (t.device() != first.device()) throw InputError("hidden", "hidden states on more than one device");
  }
  // Block b's attention input (after its norm), for every block whose output is accumulated.
  std::vector<TensorView> attention;
  if (!attention_arg.is_none()) {
    if (!options_.attention_inputs)
      throw InputError("attention_inputs", "are kept by an accumulator made with attention_inputs=True (or from Windows(heads=True))");
    attention = hiddenViews(attention_arg, 1, "attention_inputs");
    if (static_cast<int64_t>(attention.size()) < largest)
      throw InputError("attention_inputs", "gives " + std::to_string(attention.size()) + " blocks' inputs; this accumulator takes blocks 0.." +
                                               std::to_string(largest - 1));
    for (std::size_t i = 0; i < attention.size(); ++i)
      if (attention[i].tensor.sizes() != first.sizes() || attention[i].tensor.device() != first.device())
        throw InputError("attention_inputs", "block " + std::to_string(i) + "'s input is " + shapeText(attention[i].tensor) +
                                                 "; it must be the hidden states' shape " + shapeText(first) + ", on their device");
  } else if (options_.attention_inputs) {
    throw InputError("attention_inputs", "are needed: this accumulator keeps each block's attention inputs (for posgeom.heads)");
  }
  if (b == 0) return;

  std::vector<int64_t> windows;
  std::vector<std::string> labels;
  at::Tensor ids;
  if (!batch.is_none()) {
    if (!nb::isinstance<WindowBatchData>(batch)) throw InputError("batch", "must be a posgeom.WindowBatch, not " + typeName(batch));
    const auto& wb = nb::cast<const WindowBatchData&>(batch);
    if (wb.seq_len != seq_len_)
      throw InputError("batch", "holds windows of " + std::to_string(wb.seq_len) + " tokens; this accumulator takes " + std::to_string(seq_len_));
    if (wb.size() != b)
      throw InputError("batch", "holds " + std::to_string(wb.size()) + " windows; the hidden states hold " + std::to_string(b));
    windows = wb.indices;
    labels = wb.labels;
    ids = at::tensor(std::vector<int64_t>(wb.ids.begin(), wb.ids.end())).view({b, seq_len_});
  }
  if (!windows_arg.is_none()) windows = listArgument<int64_t>(windows_arg, "windows", "window indices");
  if (merged_)
    throw InputError("Accumulator", "holds merged statistics, whose windows are not in order: add to a new accumulator and merge it");
  // Each window once, in the order a run reads them: an index already added would count twice.
  for (std::size_t i = 0; i < windows.size(); ++i)
    if (windows[i] < 0 || windows[i] <= (i ? windows[i - 1] : last_window_))
      throw InputError("windows", "window " + std::to_string(windows[i]) + " comes after window " +
                                      std::to_string(i ? windows[i - 1] : last_window_) +
                                      ": windows are added once each, in increasing order, from 0");
  if (!labels_arg.is_none()) labels = listArgument<std::string>(labels_arg, "labels", "strings");
  // Shard i of n holds windows i, i + n, i + 2n, ...: indices that merge with the other shards'.
  if (windows.empty())
    for (int64_t i = 0; i < b; ++i) windows.push_back(shard_.index + shard_.count * (windows_ + i));
  if (labels.empty()) labels.assign(static_cast<std::size_t>(b), "");
  if (static_cast<int64_t>(windows.size()) != b) throw InputError("windows", "gives " + std::to_string(windows.size()) + " windows for a batch of " + std::to_string(b));
  if (static_cast<int64_t>(labels.size()) != b) throw InputError("labels", "gives " + std::to_string(labels.size()) + " labels for a batch of " + std::to_string(b));

  auto& acc = on(first.device());
  std::optional<int64_t> bad;
  try {
    nb::gil_scoped_release released;
    acc.beginBatch(windows, labels, ids.defined() ? ids.to(first.device()) : ids);
    // Every hidden state up to the last accumulated one, in order, as a model's forward
    // gives them: the cosine with the previous layer is with hidden state l - 1.
    for (int64_t l = 0; l <= largest; ++l) {
      acc.onHidden(l, views[static_cast<std::size_t>(l)].tensor);
      if (l < static_cast<int64_t>(attention.size())) acc.onAttentionInput(l, attention[static_cast<std::size_t>(l)].tensor);
    }
    bad = acc.firstNonFinite();
    acc.suspendBatch();  // holds views of the caller's tensors: let them go
  } catch (const std::exception& e) {
    refused_ = e.what();
    accumulator_->suspendBatch();
    throw;
  }
  if (bad) {
    refused_ = "hidden state " + std::to_string(*bad) + " held NaN or Inf";
    throw InputError("hidden", "hidden state " + std::to_string(*bad) + " holds NaN or Inf (or values whose squares overflow); "
                               "the accumulator's sums hold part of this batch now: start a new one");
  }
  windows_ += b;
  last_window_ = windows.back();
}

anova::AnalysisState PyAccumulator::state() const {
  requireUsable();
  anova::AnalysisState s;
  s.settings = settings_;
  // Complete: every window of its source added (a Windows iterated to its end), or the
  // caller's own windows, which are all it was given.
  const bool complete = !source_exhausted_ || *source_exhausted_;
  s.settings["data"] = {{"windows", windows_}, {"complete", complete}, {"fed_from", "python"}};
  s.windows = windows_;
  if (accumulator_) s.layers = accumulator_->statistics();
  if (s.layers.empty()) throw InputError("Accumulator", "holds no windows yet: add() hidden states first");
  return s;
}

void PyAccumulator::merge(const anova::AnalysisState& other) {
  requireUsable();
  anova::AnalysisState merged;
  if (windows_ == 0) {  // nothing here yet: the other's statistics as they are
    if (const auto d = anova::settingsDifference(settings_, other.settings, "this accumulator", "the other"); !d.empty())
      throw InputError("merge", "the other comes from another run: " + d);
    merged = other;
  } else {
    merged = anova::mergeStates({{"this accumulator", state()}, {"the other", other}}, options_.caps, /*partial=*/true);
  }
  if (!device_) device_ = at::Device(at::kCPU);
  auto fresh = std::make_unique<anova::Accumulator>(options_, seq_len_, dim_, *device_);
  fresh->restore(merged.layers, "merge");  // before anything here changes: a refusal leaves this accumulator as it was
  accumulator_ = std::move(fresh);
  windows_ = merged.windows;
  settings_ = merged.settings;
  settings_.erase("data");
  merged_ = true;
}

std::string PyAccumulator::repr() const {
  if (!refused_.empty()) return "<posgeom.Accumulator: unusable, a batch was refused part-way (" + refused_ + ")>";
  return "<posgeom.Accumulator: " + std::to_string(windows_) + " windows of " + std::to_string(seq_len_) + " positions, d = " +
         std::to_string(dim_) + ", " + std::to_string(options_.layers.size()) + " hidden states" +
         (device_ ? ", on " + device_->str() : std::string()) + ">";
}

namespace {

// layers=L: hidden states 0..L-1, add() takes L; layers=[i, j, ...]: those, add() takes any number above the largest.
std::pair<std::set<int64_t>, int64_t> layersOf(nb::handle layers) {
  std::set<int64_t> indices;
  if (nb::isinstance<nb::int_>(layers)) {
    const int64_t count = integerArgument(layers, "layers");
    if (count <= 0) throw InputError("layers", "must be positive, not " + std::to_string(count));
    for (int64_t l = 0; l < count; ++l) indices.insert(l);
    return {indices, count};
  }
  if (!nb::isinstance<nb::list>(layers) && !nb::isinstance<nb::tuple>(layers))
    throw InputError("layers", "must be a count or a list of hidden-state indices, not " + typeName(layers));
  for (nb::handle item : layers) {
    const int64_t l = integerArgument(item, "layers");
    if (l < 0) throw InputError("layers", "holds " + std::to_string(l) + ": hidden-state indices are 0 or more");
    indices.insert(l);
  }
  return {indices, 0};
}

std::optional<at::Device> deviceArgument(const std::optional<std::string>& device) {
  if (!device) return std::nullopt;
  std::optional<at::Device> parsed;
  try {
    parsed = at::Device(*device);
  } catch (const std::exception&) {
  }
  if (!parsed || !(parsed->is_cpu() || parsed->is_cuda()))
    throw InputError("device", "'" + *device + "' is not a device (cpu, cuda, cuda:N)");
  if (parsed->is_cuda() && !at::hasCUDA()) throw InputError("device", "'" + *device + "': this machine has no CUDA GPU");
  return parsed;
}

}  // namespace

PyAccumulator accumulatorFor(const pass::PassPlan& plan, const nlohmann::json& settings, const std::optional<std::string>& device,
                             std::shared_ptr<const bool> exhausted) {
  auto options = plan.pass.accumulator;
  PyAccumulator accumulator(options, plan.pass.seq_len, plan.config.hidden_size, 0, settings, deviceArgument(device));
  accumulator.setSource(plan.shard, std::move(exhausted));
  return accumulator;
}

void bindAccumulator(nb::module_& m) {
  // The address add() reads an array at: the tests' proof that nothing is copied on the way in.
  m.def(
      "_view_address", [](nb::handle array) { return reinterpret_cast<uintptr_t>(tensorView(array, "array").tensor.data_ptr()); },
      nb::arg("array"), "The address add() reads an array at (the tests' check that nothing is copied).");
  nb::class_<PyAccumulator>(m, "Accumulator",
                            "Reduces batches of hidden states to a state's statistics (float64 sums, on the tensors' device) and "
                            "drops each batch: the accumulator of `posgeom analyze`, fed from Python.")
      .def(
          "__init__",
          [](PyAccumulator* self, int64_t num_positions, int64_t dim, nb::handle layers, int64_t skip_first, bool second_moment,
             std::optional<std::string> device, std::optional<std::string> shard, bool attention_inputs) {
            auto [indices, count] = layersOf(layers);
            anova::AccumulatorOptions options;
            options.layers = indices;
            options.skip_first = skip_first;
            options.second_moment = second_moment;
            options.attention_inputs = attention_inputs;
            nlohmann::json settings = {{"tool", "posgeom"},           {"source", "python"},
                                       {"seq_len", num_positions},    {"skip_first", skip_first},
                                       {"dim", dim},                  {"layer_selection", indices},
                                       {"second_moment", second_moment}, {"attention_inputs", attention_inputs}};
            const auto part = pass::parseShard(shard.value_or("0/1"), "shard");
            settings["shard"] = part.str();
            new (self) PyAccumulator(options, num_positions, dim, count, settings, deviceArgument(device));
            self->setSource(part, nullptr);
          },
          nb::arg("num_positions"), nb::arg("dim"), nb::arg("layers") = 1, nb::kw_only(), nb::arg("skip_first") = 1,
          nb::arg("second_moment") = true, nb::arg("device") = nb::none(), nb::arg("shard") = nb::none(),
          nb::arg("attention_inputs") = false,
          nb::sig("def __init__(self, num_positions: int, dim: int, layers: int | Sequence[int] = 1, *, skip_first: int = 1, "
                  "second_moment: bool = True, device: str | None = None, shard: str | None = None, "
                  "attention_inputs: bool = False) -> None"),
          "num_positions: tokens per window (T); dim: the hidden width (d); layers: how many hidden states add() takes "
          "(all accumulated), or a list of the hidden-state indices to accumulate. skip_first: positions dropped from every "
          "statistic (the first attends only to itself). device: where the sums are (default: the first batch's device). "
          "shard: 'i/n' when this accumulator holds one of n disjoint parts of the windows, so that the states merge. "
          "attention_inputs: keep each block's attention inputs too (add(..., attention_inputs=...)), for posgeom.heads.")
      .def("add", &PyAccumulator::add, nb::arg("hidden"), nb::kw_only(), nb::arg("batch") = nb::none(),
           nb::arg("labels") = nb::none(), nb::arg("windows") = nb::none(), nb::arg("attention_inputs") = nb::none(),
           nb::sig("def add(self, hidden: object, *, batch: WindowBatch | None = None, labels: Sequence[str] | None = None, "
                   "windows: Sequence[int] | None = None, attention_inputs: object | None = None) -> None"),
           "Adds one batch. hidden: a sequence of [batch, T, d] by hidden-state index (output_hidden_states), an [L, batch, T, "
           "d] array, or one [batch, T, d]; torch tensors (CPU or CUDA) or numpy arrays, read where they are without a copy. "
           "batch: the posgeom.WindowBatch the hidden states are of (its window indices, document labels and ids). "
           "labels, windows: each window's document and index, without a batch (default: no label, consecutive indices). "
           "attention_inputs: with attention_inputs=True, block b's attention input after its norm, [batch, T, d] by block.")
      .def("merge",
           [](PyAccumulator& self, nb::handle other) {
             if (nb::isinstance<PyAccumulator>(other)) return self.merge(nb::cast<const PyAccumulator&>(other).state());
             self.merge(nb::cast<const anova::AnalysisState&>(other));
           },
           nb::arg("other"), nb::sig("def merge(self, other: Accumulator | State) -> None"), "Adds another accumulator's (or state's) statistics: its windows must be another shard of the same run.")
      .def("state", &PyAccumulator::state, "The statistics as a posgeom.State (copied to the host).")
      .def(
          "save",
          [](const PyAccumulator& self, const std::filesystem::path& path, bool overwrite) { saveStateFile(self.state(), path, overwrite); },
          nb::arg("path"), nb::kw_only(), nb::arg("overwrite") = false,
          "Writes the state as state.safetensors, which `posgeom merge` reads with the CLI's shards.")
      .def_prop_ro("windows", &PyAccumulator::windows, "windows added")
      .def("__repr__", &PyAccumulator::repr);
}

}  // namespace posgeom::python
