#include "state_binding.h"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"
#include "python_values.h"

namespace posgeom::python {
namespace fs = std::filesystem;

void saveStateFile(const anova::AnalysisState& state, const fs::path& path, bool overwrite) {
  if (path.empty()) throw InputError("path", "is empty: give the file to write");
  std::error_code ec;
  const auto status = fs::symlink_status(path, ec);
  if (fs::exists(status)) {
    if (!overwrite) throw InputError(path.string(), "exists; pass overwrite=True to replace it");
    if (!fs::is_regular_file(status)) throw InputError(path.string(), "is not a regular file; not replaced");
    try {
      (void)anova::StateReader(path);
    } catch (const std::exception&) {
      throw InputError(path.string(), "is not a posgeom state; not replaced");
    }
  }
  anova::saveState(state, path);
}

namespace {

std::vector<int64_t> layerIndices(const anova::AnalysisState& state) {
  std::vector<int64_t> layers;
  for (const auto& l : state.layers) layers.push_back(l.layer);
  return layers;
}

const anova::LayerStatistics& layerOf(const anova::AnalysisState& state, int64_t layer) {
  for (const auto& l : state.layers)
    if (l.layer == layer) return l;
  throw InputError("layer", std::to_string(layer) + " is not among the state's layers");
}

// A layer's mergeable statistics (the float64 sums and the kept samples) as numpy arrays.
nb::dict statisticsOf(const anova::LayerStatistics& l) {
  nb::dict d;
  d["sequences"] = l.sequences;
  d["position_sum"] = numpyOf(l.position_sum);
  d["second_moment"] = numpyOf(l.second_moment);
  d["context_second_moment"] = numpyOf(l.context_second_moment);
  d["norm_sum"] = l.norm_sum;
  d["previous_cosine_sum"] = l.previous_cosine_sum;
  d["context_means"] = numpyOf(l.context_means);
  d["context_windows"] = l.context_windows;
  d["context_labels"] = l.context_labels;
  d["reservoir"] = numpyOf(l.reservoir);
  d["reservoir_windows"] = l.reservoir_windows;
  return d;
}

}  // namespace

void bindState(nb::module_& m) {
  nb::class_<anova::AnalysisState>(m, "State",
                                    "The statistics of an analysis: what state.safetensors holds, and what `posgeom merge` reads.")
      .def_prop_ro("windows", [](const anova::AnalysisState& s) { return s.windows; }, "windows accumulated")
      .def_prop_ro("layers", &layerIndices, "the hidden-state indices it holds, ascending")
      .def_prop_ro("settings", [](const anova::AnalysisState& s) { return nb::cast<nb::dict>(toPython(s.settings)); },
                   "the run's identity and settings (a merge compares them)")
      .def(
          "statistics", [](const anova::AnalysisState& s, int64_t layer) { return statisticsOf(layerOf(s, layer)); },
          nb::arg("layer"),
          "A layer's statistics: sequences, position_sum [T', d], second_moment and context_second_moment [d, d], norm_sum, "
          "previous_cosine_sum, and the kept context_means and reservoir (numpy float64).")
      .def(
          "save", [](const anova::AnalysisState& s, const fs::path& path, bool overwrite) { saveStateFile(s, path, overwrite); },
          nb::arg("path"), nb::kw_only(), nb::arg("overwrite") = false,
          "Writes state.safetensors (what `posgeom merge` reads). An existing file is replaced only with overwrite=True, and "
          "only when it is a posgeom state.")
      .def("__repr__", [](const anova::AnalysisState& s) {
        return "<posgeom.State: " + std::to_string(s.windows) + " windows, " + std::to_string(s.layers.size()) + " layers>";
      });

  m.def(
      "load",
      [](const fs::path& path) {
        try {
          return anova::loadState(path);
        } catch (const InputError&) {
          throw;
        } catch (const std::exception& e) {  // a safetensors file whose settings are not a state's
          throw InputError(path.string(), std::string("is not a posgeom state (") + e.what() + ")");
        }
      },
      nb::arg("path"),
      "Reads a state.safetensors written by `posgeom analyze`, `merge` or State.save.");
  m.def(
      "merge",
      [](const std::vector<const anova::AnalysisState*>& states, bool partial) {
        if (states.empty()) throw InputError("states", "is empty: give the states of a run's shards");
        std::vector<anova::NamedState> named;
        for (std::size_t i = 0; i < states.size(); ++i) named.push_back({"state " + std::to_string(i), *states[i]});
        return anova::mergeStates(named, anova::SampleCaps{}, partial);
      },
      nb::arg("states"), nb::kw_only(), nb::arg("partial") = false,
      "One state from the states of a run's shards (`posgeom merge`): each shard once, the same settings, model and corpus.");
}

}  // namespace posgeom::python
