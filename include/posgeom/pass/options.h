#pragma once
// What `analyze` (and `batch`, `bench`, `merge`) are asked to do, as typed values: the
// command line and config files are parsed into these once, and every value that can be
// judged without the model is judged then. Torch-free.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "posgeom/anova/layer_statistics.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/heads/head_analysis.h"
#include "posgeom/metrics/screenot.h"
#include "posgeom/runtime/device.h"

namespace posgeom::pass {

enum class Sampling { kSequential, kRandom };
Sampling parseSampling(const std::string& name, const std::string& where = "--sampling");
const char* samplingName(Sampling sampling);

// --shard i/n: every n-th window, starting at i.
struct Shard {
  int64_t index = 0;
  int64_t count = 1;
  std::string str() const { return std::to_string(index) + "/" + std::to_string(count); }
  bool operator==(const Shard& o) const { return index == o.index && count == o.count; }
};
Shard parseShard(const std::string& spec, const std::string& where = "--shard");

// --layer: "all", or hidden-state indices "0,3,5" (their range is judged with the model).
struct LayerSelection {
  std::vector<int64_t> indices;  // empty: all
  bool all() const { return indices.empty(); }
};
LayerSelection parseLayerSelection(const std::string& spec, const std::string& where = "--layer");
// The selected hidden states of a model with `hidden_states` of them; InputError for one outside.
std::set<int64_t> resolveLayers(const LayerSelection& selection, int64_t hidden_states);

struct ReportOptions {
  int screenot_k = 20;
  // Given by the user (or a config file): kept as given, and an error where it does not
  // fit. Not given: cut to fit short windows and narrow models (fitReportOptions).
  bool screenot_k_given = false;
  metrics::ScreeNotStrategy screenot_strategy = metrics::ScreeNotStrategy::kImpute;
  int lowfreq_k = 0;  // 0: min(10, the window's positions); given, it must fit the window
  // Where the d x d eigenvalue problems run: the run's --device (a CUDA one: cuSOLVER).
  runtime::DeviceSpec end_device;
};

struct AnalyzeOptions {
  std::string model;                     // directory or hub name; empty: the bundled default
  std::string revision;                  // of a hub name: branch, tag or commit (empty: main)
  std::filesystem::path tokenizer;       // default: the model's own tokenizer files
  corpus::CorpusOptions corpus;          // empty path: the default corpus
  std::filesystem::path activations;     // instead of model + corpus: hidden [L,N,T,d] or hidden.<l> [N,T,d]
  LayerSelection layers;
  int64_t seq_len = 0;                   // 0: min(512, the model's maximum)
  int64_t num_seqs = 0;                  // 0: every window of the corpus
  int64_t batch_size = 0;                // windows per pass; 0: chosen (preferredBatch, within memory)
  int64_t skip_first = 1;
  runtime::DeviceSpec device;
  runtime::ComputeDtype dtype = runtime::ComputeDtype::kFloat32;
  Sampling sampling = Sampling::kSequential;
  uint64_t seed = 0;
  bool cross_documents = false;
  int64_t windows_per_document = 0;      // > 0: a quota per document (balanced labels)
  bool special_tokens = true;            // BOS / [CLS] ... [SEP] around each window
  bool causal = false;                   // causal mask for BERT
  std::optional<Shard> shard;
  bool second_moment = true;
  // --layer-cosines: the mean cosine between every pair of analysed layers (anova::
  // AccumulatorOptions::layer_cosines); not measured layer-major.
  bool layer_cosines = false;
  bool heads = false;                    // positional kernels of every head of the selected blocks
  // As given: query, kernel_skip, thresholds, contextual_cv, qk_maps (--qk-heads) and
  // keep_kernels (--save-kernels, into kernels_B<b>.safetensors). The subspace bound comes
  // from `report`, the repeat period from the plan: headOptionsOf fills them in.
  heads::HeadOptions head_options;
  bool neurons = false;       // block 0's contextual neurons (heads::analyzeNeurons) into neurons.csv
  anova::SampleCaps caps;
  ReportOptions report;
  std::filesystem::path out = "posgeom-report";
  bool force = false;                    // write into an --out that is not empty
  std::filesystem::path resume;          // a stopped run's --out: continue it there
  int64_t save_every = 0;                // save the state every this many windows; 0: every 10 minutes
  int64_t stop_after = 0;                // stop (state saved, to resume) after this many windows
  std::optional<int64_t> max_memory;     // bytes the pass may use; none: what the device has
  bool layer_major = false;              // block by block over waves of windows (Model::forwardWave)
  int64_t wave = 0;                      // with layer_major: windows a wave holds; 0: as memory allows
  // A distributed launch (torchrun, srun): where the ranks meet (runtime::detectLaunch),
  // and how long any rank waits for the others before it gives up on them.
  std::string dist_init = "env";
  int64_t dist_timeout_s = 1800;
};

// The checks that need no model: signs and ranges of the numbers, combinations of options.
// Throws InputError naming the option.
void validateOptions(const AnalyzeOptions& options);

// The heads analysis as asked, judged: head_options with the subspace bound of the report
// options and block 0's kernels kept for --neurons.
heads::HeadOptions headOptionsOf(const AnalyzeOptions& options);

}  // namespace posgeom::pass
