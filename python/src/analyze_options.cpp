#include "analyze_options.h"

#include <nanobind/stl/string.h>

#include <functional>
#include <map>
#include <string>

#include "posgeom/base/edit_distance.h"
#include "posgeom/base/error.h"
#include "python_values.h"

namespace posgeom::python {
namespace {

using Setter = std::function<void(pass::AnalyzeOptions&, nb::handle, const std::string&)>;

Setter text(std::string pass::AnalyzeOptions::*field) {
  return [field](pass::AnalyzeOptions& o, nb::handle v, const std::string& k) { o.*field = textArgument(v, k); };
}
Setter path(std::filesystem::path pass::AnalyzeOptions::*field) {
  return [field](pass::AnalyzeOptions& o, nb::handle v, const std::string& k) { o.*field = textArgument(v, k); };
}
// The CLI's bounds (cli/analyze_command.cpp's atLeast), in its words.
int64_t atLeast(int64_t minimum, nb::handle v, const std::string& k) {
  const int64_t value = integerArgument(v, k);
  if (value < minimum)
    throw InputError(k, "must be a whole number >= " + std::to_string(minimum) + " (got " + std::to_string(value) + ")");
  return value;
}

Setter integer(int64_t pass::AnalyzeOptions::*field, int64_t minimum) {
  return [field, minimum](pass::AnalyzeOptions& o, nb::handle v, const std::string& k) { o.*field = atLeast(minimum, v, k); };
}
Setter flag(bool pass::AnalyzeOptions::*field) {
  return [field](pass::AnalyzeOptions& o, nb::handle v, const std::string& k) { o.*field = boolArgument(v, k); };
}

// --layer: "all", an index, or a list of indices.
pass::LayerSelection layerSelection(nb::handle v, const std::string& k) {
  if (nb::isinstance<nb::int_>(v)) return pass::parseLayerSelection(std::to_string(integerArgument(v, k)), k);
  if (nb::isinstance<nb::list>(v) || nb::isinstance<nb::tuple>(v)) {
    std::string spec;
    for (nb::handle item : v) spec += (spec.empty() ? "" : ",") + std::to_string(integerArgument(item, k));
    return pass::parseLayerSelection(spec, k);
  }
  return pass::parseLayerSelection(textArgument(v, k), k);
}

const std::map<std::string, Setter>& setters() {
  using O = pass::AnalyzeOptions;
  static const std::map<std::string, Setter> table = {
      {"model", text(&O::model)},
      {"revision", text(&O::revision)},
      {"tokenizer", path(&O::tokenizer)},
      {"corpus", [](O& o, nb::handle v, const std::string& k) { o.corpus.path = textArgument(v, k); }},
      {"activations", path(&O::activations)},
      {"layer", [](O& o, nb::handle v, const std::string& k) { o.layers = layerSelection(v, k); }},
      {"seq_len", integer(&O::seq_len, 2)},
      {"num_seqs", integer(&O::num_seqs, 1)},
      {"batch_size", integer(&O::batch_size, 0)},
      {"skip_first", integer(&O::skip_first, 0)},
      {"windows_per_document", integer(&O::windows_per_document, 0)},
      {"device", [](O& o, nb::handle v, const std::string& k) { o.device = runtime::parseDevice(textArgument(v, k), k); }},
      {"dtype", [](O& o, nb::handle v, const std::string& k) { o.dtype = runtime::parseComputeDtype(textArgument(v, k), k); }},
      {"sampling", [](O& o, nb::handle v, const std::string& k) { o.sampling = pass::parseSampling(textArgument(v, k), k); }},
      {"seed",
       [](O& o, nb::handle v, const std::string& k) {
         o.seed = static_cast<uint64_t>(atLeast(0, v, k));
         o.corpus.seed = o.seed;
       }},
      {"shard", [](O& o, nb::handle v, const std::string& k) { o.shard = pass::parseShard(textArgument(v, k), k); }},
      {"cross_documents", flag(&O::cross_documents)},
      {"special_tokens", flag(&O::special_tokens)},
      {"causal", flag(&O::causal)},
      {"second_moment", flag(&O::second_moment)},
      {"layer_cosines", flag(&O::layer_cosines)},
      {"heads", flag(&O::heads)},
      {"screenot_k",
       [](O& o, nb::handle v, const std::string& k) {
         o.report.screenot_k = static_cast<int>(atLeast(1, v, k));
         o.report.screenot_k_given = true;
       }},
      {"lowfreq_k", [](O& o, nb::handle v, const std::string& k) { o.report.lowfreq_k = static_cast<int>(atLeast(1, v, k)); }},
  };
  return table;
}

}  // namespace

pass::AnalyzeOptions analyzeOptionsOf(const nb::kwargs& kwargs, std::initializer_list<const char*> allowed_extra) {
  pass::AnalyzeOptions o;
  const auto& table = setters();
  for (const auto& [key_handle, value] : kwargs) {
    const auto key = nb::cast<std::string>(key_handle);
    if (std::find_if(allowed_extra.begin(), allowed_extra.end(), [&](const char* e) { return key == e; }) != allowed_extra.end())
      continue;
    const auto it = table.find(key);
    if (it == table.end()) {
      std::string nearest;
      std::size_t best = 3;
      for (const auto& [name, setter] : table)
        if (const auto d = editDistance(key, name); d < best) best = d, nearest = name;
      throw InputError(key, "is not an option of posgeom's analysis" + (nearest.empty() ? std::string() : " (did you mean " + nearest + "?)"));
    }
    if (value.is_none()) continue;  // None: the default, as when not given
    it->second(o, value, key);
  }
  o.report.end_device = o.device;
  return o;
}

}  // namespace posgeom::python
