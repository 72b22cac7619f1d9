#include "posgeom/pass/options.h"

#include <cstdlib>
#include <sstream>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/runtime/launch.h"

namespace posgeom::pass {
namespace {

std::string formatNumber(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

}  // namespace

Sampling parseSampling(const std::string& name, const std::string& where) {
  if (name == "sequential") return Sampling::kSequential;
  if (name == "random") return Sampling::kRandom;
  throw InputError(where, "'" + name + "' (use sequential or random)");
}

const char* samplingName(Sampling sampling) { return sampling == Sampling::kRandom ? "random" : "sequential"; }

Shard parseShard(const std::string& spec, const std::string& where) {
  const auto slash = spec.find('/');
  try {
    if (slash != std::string::npos) {
      std::size_t used_i = 0, used_n = 0;
      const std::string i_text = spec.substr(0, slash), n_text = spec.substr(slash + 1);
      const int64_t i = std::stoll(i_text, &used_i), n = std::stoll(n_text, &used_n);
      if (used_i == i_text.size() && used_n == n_text.size() && n >= 1 && i >= 0 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw InputError(where, "'" + spec + "' must be i/n with 0 <= i < n");
}

LayerSelection parseLayerSelection(const std::string& spec, const std::string& where) {
  LayerSelection selection;
  if (spec == "all") return selection;
  if (!spec.empty() && spec.back() == ',')  // getline would drop the empty last item
    throw InputError(where, "'" + spec + "' ends in a comma: an empty hidden-state index");
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0)
      throw InputError(where, "'" + item + "' is not a hidden-state index (0, 1, ...; or all)");
    selection.indices.push_back(v);
  }
  if (selection.indices.empty()) throw InputError(where, "no layers selected");
  return selection;
}

std::set<int64_t> resolveLayers(const LayerSelection& selection, int64_t hidden_states) {
  std::set<int64_t> out;
  if (selection.all()) {
    for (int64_t l = 0; l < hidden_states; ++l) out.insert(l);
    return out;
  }
  for (const int64_t v : selection.indices) {
    if (v >= hidden_states)
      throw InputError(option::kLayer, "'" + std::to_string(v) + "' is not a hidden-state index in 0.." + std::to_string(hidden_states - 1));
    out.insert(v);
  }
  return out;
}

void validateOptions(const AnalyzeOptions& o) {
  if (o.batch_size < 0) throw InputError(option::kBatchSize, "must not be negative");
  if (o.windows_per_document < 0)
    throw InputError(option::kWindowsPerDocument, "must not be negative (got " + std::to_string(o.windows_per_document) + "; 0: no limit)");
  if (o.save_every < 0 || o.stop_after < 0) throw InputError("--save-every/--stop-after", "must not be negative");
  runtime::validateDistInit(o.dist_init);
  if (o.dist_timeout_s < 1) throw InputError(option::kDistTimeout, "must be at least 1 second");
  if (o.heads && !o.activations.empty()) throw InputError(option::kHeads, "needs the model (--model), not --activations");
  if (o.heads) headOptionsOf(o);
  if (o.head_options.keep_kernels && !o.heads) throw InputError(option::kSaveKernels, "saves the kernels of --heads: add --heads");
  if (o.neurons && !o.heads) throw InputError(option::kNeurons, "reads the kernels of --heads: add --heads");
  if (o.neurons && o.corpus.path == "-")
    throw InputError(option::kNeurons, "reads the sampled windows again: the corpus must be files or generated, not standard input");
  if (!o.resume.empty() && !o.activations.empty())
    throw InputError(option::kResume, "continues a pass through a model, not --activations");
  if (o.wave < 0) throw InputError(option::kWave, "must not be negative (0: as many windows as memory holds)");
  if (o.wave > 0 && !o.layer_major) throw InputError(option::kWave, "sizes the waves of --layer-major: add --layer-major");
  if (o.layer_cosines && o.layer_major)
    throw InputError(option::kLayerCosines, "needs a batch's every layer at once, which --layer-major never holds: drop one of them");
  if (o.layer_major && !o.activations.empty())
    throw InputError(option::kLayerMajor, "runs the model block by block: it needs --model, not --activations");
}

heads::HeadOptions headOptionsOf(const AnalyzeOptions& options) {
  heads::HeadOptions o = options.head_options;
  if (o.kernel_skip < 0) throw InputError(option::kKernelSkip, "must not be negative");
  if (options.caps.attention_samples < 1) throw InputError(option::kHeadSamples, "must be at least 1");
  // ETC / keys lies in [0, 1]; a head below --local-below is local, above --uniform-above uniform.
  for (const auto& [name, value] : {std::pair<const char*, double>{option::kLocalBelow, o.thresholds.local},
                                    {option::kUniformAbove, o.thresholds.uniform}})
    if (!(value >= 0 && value <= 1)) throw InputError(name, "must lie in [0, 1] (it bounds ETC / keys), not " + formatNumber(value));
  if (o.thresholds.local > o.thresholds.uniform)
    throw InputError(option::kLocalBelow, formatNumber(o.thresholds.local) + " is above --uniform-above " +
                                          formatNumber(o.thresholds.uniform) + ": a head would be local and uniform at once");
  if (!(o.contextual_cv >= 0)) throw InputError(option::kContextualBelow, "must not be negative");
  o.subspace_k = options.report.screenot_k;
  o.subspace_strategy = options.report.screenot_strategy;
  o.keep_first_block_kernels = options.neurons;
  return o;
}

}  // namespace posgeom::pass
