#include "windows_binding.h"

#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <memory>

#include "accumulator_binding.h"
#include "analyze_options.h"
#include "bindings.h"
#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/pass/window_source.h"
#include "python_values.h"

namespace posgeom::python {
namespace {

class PyWindows {
 public:
  explicit PyWindows(const pass::AnalyzeOptions& options) : options_(options) {
    if (!options.activations.empty()) throw InputError("activations", "are hidden states already: give them to an Accumulator, or to posgeom.analyze(activations=...)");
    source_ = std::make_unique<pass::WindowSource>(options);
  }
  WindowBatchData next() {
    auto batch = source_->next();
    if (batch.size() == 0) {
      *exhausted_ = true;
      throw nb::stop_iteration();
    }
    return {std::move(batch.ids), std::move(batch.indices), std::move(batch.labels), source_->plan().pass.seq_len};
  }
  const pass::WindowSource& source() const { return *source_; }
  std::shared_ptr<const bool> exhausted() const { return exhausted_; }

 private:
  pass::AnalyzeOptions options_;
  std::unique_ptr<pass::WindowSource> source_;
  std::shared_ptr<bool> exhausted_ = std::make_shared<bool>(false);
};

nb::object idsArray(const WindowBatchData& b) {
  return ownedArray<int64_t>(b.ids.data(), b.ids.size(), {static_cast<std::size_t>(b.size()), static_cast<std::size_t>(b.seq_len)});
}

nb::object indicesArray(const WindowBatchData& b) { return ownedArray<int64_t>(b.indices.data(), b.indices.size(), {b.indices.size()}); }

}  // namespace

void bindWindows(nb::module_& m) {
  nb::class_<WindowBatchData>(m, "WindowBatch", "One batch of windows, as analyze's pass would run it through the model.")
      .def_prop_ro("ids", &idsArray, "token ids [batch, T] (int64, numpy), the framing (BOS, [CLS] ... [SEP]) included")
      .def_prop_ro("indices", &indicesArray, "each window's index in the run")
      .def_ro("labels", &WindowBatchData::labels, "each window's document")
      .def("__len__", &WindowBatchData::size)
      .def("__repr__", [](const WindowBatchData& b) {
        return "<posgeom.WindowBatch: " + std::to_string(b.size()) + " windows of " + std::to_string(b.seq_len) + " tokens, from window " +
               (b.indices.empty() ? std::string("-") : std::to_string(b.indices.front())) + ">";
      });

  nb::class_<PyWindows>(m, "Windows",
                        "The windows `posgeom analyze` reads for the same options (model, corpus, seq_len, num_seqs, sampling, "
                        "seed, shard, batch_size, ...), in batches: iterate it, run each batch's ids through the model, and add "
                        "the hidden states to windows.accumulator(). It is read once, as analyze reads its corpus.")
      .def(
          "__init__", [](PyWindows* self, const nb::kwargs& kwargs) { new (self) PyWindows(analyzeOptionsOf(kwargs)); },
          nb::sig("def __init__(self, **options: object) -> None"),
          "Keyword arguments are analyze's options, '-' written '_' (model=, corpus=, seq_len=, ...).")
      .def("__iter__", [](nb::handle self) { return nb::borrow(self); })
      .def("__next__", &PyWindows::next)
      .def("__repr__",
           [](const PyWindows& w) {
             const auto& plan = w.source().plan();
             return "<posgeom.Windows: " + std::to_string(plan.pass.seq_len) + " tokens each, batches of " +
                    std::to_string(plan.pass.batch_size) + ", shard " + plan.shard.str() + (*w.exhausted() ? ", all read" : "") + ">";
           })
      .def_prop_ro("settings", [](const PyWindows& w) { return nb::cast<nb::dict>(toPython(w.source().settings())); },
                   "what analyze's state records for these options")
      .def_prop_ro("num_positions", [](const PyWindows& w) { return w.source().plan().pass.seq_len; }, "tokens per window (T)")
      .def_prop_ro("dim", [](const PyWindows& w) { return w.source().plan().config.hidden_size; }, "the model's hidden width (d)")
      .def_prop_ro("layers",
                   [](const PyWindows& w) {
                     const auto& layers = w.source().plan().pass.accumulator.layers;
                     return std::vector<int64_t>(layers.begin(), layers.end());
                   },
                   "the hidden-state indices analyze accumulates")
      .def_prop_ro("model_dir", [](const PyWindows& w) { return w.source().plan().model_dir.string(); },
                   "the model's directory (a hub name resolved into the cache)")
      .def(
          "accumulator",
          [](const PyWindows& w, std::optional<std::string> device) {
            return accumulatorFor(w.source().plan(), w.source().settings(), device, w.exhausted());
          },
          nb::kw_only(), nb::arg("device") = nb::none(),
          "An Accumulator with analyze's settings for these windows: its state merges with analyze's shards.");
}

}  // namespace posgeom::python
