#include "results_binding.h"

#include <nanobind/stl/filesystem.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "bindings.h"
#include "posgeom/base/error.h"
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/output_directory.h"
#include "posgeom/metrics/screenot.h"
#include "posgeom/pass/plan.h"
#include "python_values.h"

namespace posgeom::python {
namespace fs = std::filesystem;

void writeReportDirectory(const jobs::ComputedReport& computed, const anova::AnalysisState* state, const fs::path& out, bool force) {
  jobs::OutputDirectory output(out, force ? jobs::OutMode::kForce : jobs::OutMode::kNew);
  if (state) anova::saveState(*state, output.work() / jobs::kStateFile);
  jobs::writeReportFiles(computed, output.work());
  output.commit();
}

namespace {

const metrics::LayerMetrics& layerOf(const jobs::ComputedReport& r, int64_t layer) {
  for (const auto& l : r.layers)
    if (l.layer == layer) return l;
  std::string held;
  for (const auto& l : r.layers) held += (held.empty() ? "" : ", ") + std::to_string(l.layer);
  throw InputError("layer", std::to_string(layer) + " is not among the results' layers (" + held + ")");
}

// Every matrix and vector of a layer, by the name summary.json and the CSVs give it.
nb::dict arraysOf(const metrics::LayerMetrics& l) {
  nb::dict d;
  d["positional"] = numpyOf(l.positional);
  d["gram"] = numpyOf(l.gram);
  d["gram_dct"] = numpyOf(l.gram_dct);
  d["power_spectrum"] = numpyOf(l.power_spectrum);
  d["spiral"] = numpyOf(l.spiral);
  d["singular_pos"] = numpyOf(l.singular_pos);
  d["singular_cvec"] = numpyOf(l.singular_cvec);
  d["singular_resid"] = numpyOf(l.singular_resid);
  d["combined_gram"] = numpyOf(l.combined_gram);
  d["reservoir_cvec"] = numpyOf(l.reservoir_cvec);
  return d;
}

pass::ReportOptions reportOptions(std::optional<int> screenot_k, std::optional<int> lowfreq_k, std::optional<std::string> strategy,
                                  const anova::AnalysisState& state) {
  pass::ReportOptions report;
  for (const auto& [given, name] : {std::pair{screenot_k, "screenot_k"}, std::pair{lowfreq_k, "lowfreq_k"}})
    if (given && *given < 1) throw InputError(name, "must be a whole number >= 1 (got " + std::to_string(*given) + ")");
  if (screenot_k) report.screenot_k = *screenot_k, report.screenot_k_given = true;
  if (lowfreq_k) report.lowfreq_k = *lowfreq_k;
  if (strategy) report.screenot_strategy = metrics::parseScreeNotStrategy(*strategy);
  return pass::fitReportOptions(report, anova::StateLayers(state.layers));
}

}  // namespace

void bindResults(nb::module_& m) {
  nb::class_<jobs::ComputedReport>(m, "Results",
                                   "Every number of a report: summary (summary.json's object) and each layer's matrices.")
      .def_prop_ro("summary", [](const jobs::ComputedReport& r) { return nb::cast<nb::dict>(toPython(r.summary)); },
                   "summary.json's object: the settings, per-layer numbers, cross-layer cosines and, with heads, every head")
      .def_prop_ro("layers",
                   [](const jobs::ComputedReport& r) {
                     std::vector<int64_t> layers;
                     for (const auto& l : r.layers) layers.push_back(l.layer);
                     return layers;
                   },
                   "the hidden-state indices analysed")
      .def(
          "arrays", [](const jobs::ComputedReport& r, int64_t layer) { return arraysOf(layerOf(r, layer)); }, nb::arg("layer"),
          "A layer's matrices as numpy float64 arrays: positional (P, [T', d]), gram and gram_dct ([T', T']), "
          "power_spectrum, spiral, singular_pos / singular_cvec / singular_resid, combined_gram, reservoir_cvec.")
      .def("__repr__", [](const jobs::ComputedReport& r) {
        return "<posgeom.Results: " + std::to_string(r.layers.size()) + " layers, " + std::to_string(r.head_reports.size()) + " heads>";
      });

  m.def(
      "metrics",
      [](const anova::AnalysisState& state, std::optional<int> screenot_k, std::optional<int> lowfreq_k,
         std::optional<std::string> screenot_strategy) {
        const auto report = reportOptions(screenot_k, lowfreq_k, screenot_strategy, state);
        nb::gil_scoped_release released;
        return jobs::computeReport(state.settings, anova::StateLayers(state.layers), report);
      },
      nb::arg("state"), nb::kw_only(), nb::arg("screenot_k") = nb::none(), nb::arg("lowfreq_k") = nb::none(),
      nb::arg("screenot_strategy") = nb::none(),
      "The metrics of every layer of a state: the numbers of summary.json and the CSVs, as `posgeom merge` computes them.");
  m.def(
      "report",
      [](nb::handle what, const fs::path& out, bool force) {
        if (nb::isinstance<jobs::ComputedReport>(what)) {
          writeReportDirectory(nb::cast<const jobs::ComputedReport&>(what), nullptr, out, force);
          return;
        }
        if (!nb::isinstance<anova::AnalysisState>(what))
          throw InputError("report", "takes a posgeom.State or posgeom.Results, not " + typeName(what));
        const auto& state = nb::cast<const anova::AnalysisState&>(what);
        const auto report = reportOptions(std::nullopt, std::nullopt, std::nullopt, state);
        writeReportDirectory(jobs::computeReport(state.settings, anova::StateLayers(state.layers), report), &state, out, force);
      },
      nb::arg("results"), nb::arg("out"), nb::kw_only(), nb::arg("force") = false,
      nb::sig("def report(results: State | Results, out: str | os.PathLike, *, force: bool = False) -> None"),
      "Writes summary.json, the CSV tables and report.html into out (and a State's state.safetensors), as analyze does: out "
      "must be absent or empty, or hold a report alone with force=True.");
}

}  // namespace posgeom::python
