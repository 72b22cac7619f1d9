#pragma once
// `posgeom analyze` and `posgeom merge`: the whole flow of DESIGN §1, from a corpus (or
// hidden states made elsewhere) to state.safetensors and the report. Torch-free header.
#include <filesystem>
#include <string>
#include <vector>

#include "posgeom/anova/layer_statistics.h"
#include "posgeom/corpus/corpus_source.h"

namespace posgeom::pipeline {

struct ReportOptions {
  int screenot_k = 20;
  std::string screenot_strategy = "i";
  int lowfreq_k = 10;
};

struct AnalyzeJob {
  std::string model;                     // directory or hub name; empty: the bundled default
  std::filesystem::path tokenizer;       // default: the model's own tokenizer files
  corpus::CorpusOptions corpus;          // empty path: kDefaultCorpus
  std::filesystem::path activations;     // instead of model + corpus: hidden [L,N,T,d] or hidden.<l> [N,T,d]
  std::string layers = "all";            // "all" or "0,3,5"
  int64_t seq_len = 0;                   // 0: min(512, the model's maximum)
  int64_t num_seqs = 0;                  // 0: every window of the corpus
  int64_t batch_size = 0;                // windows per pass; 0: chosen (preferredBatch, within memory)
  int64_t skip_first = 1;
  std::string device = "cpu";
  std::string dtype = "float32";
  std::string sampling = "sequential";   // or random
  uint64_t seed = 0;
  bool cross_documents = false;
  int64_t windows_per_document = 0;      // > 0: a quota per document (balanced labels)
  bool special_tokens = true;            // BOS / [CLS] ... [SEP] around each window
  bool causal = false;                   // causal mask for BERT
  std::string shard;                     // "i/n"
  bool second_moment = true;
  bool heads = false;                    // positional kernels of every head of the selected layers
  int64_t kernel_skip = 5;               // keys before this position are outside the kernels' softmax
  std::string kernel_query = "sampled";  // sampled queries (caps.attention_samples of them) or "mean"
  double local_threshold = 0.1;          // ETC / keys below: local
  double uniform_threshold = 0.5;        // ETC / keys above: uniform
  double contextual_cv = 0.2;            // not local and denominator CV below: contextual
  std::string qk_heads;                  // "L.H,...": heads whose QK maps go into the report
  anova::SampleCaps caps;
  ReportOptions report;
  std::filesystem::path out = "posgeom-report";
  bool force = false;                    // write into an --out that is not empty
  std::filesystem::path resume;          // a stopped run's --out: continue it there
  int64_t save_every = 0;                // save the state every this many windows; 0: every 10 minutes
  int64_t stop_after = 0;                // stop (state saved, to resume) after this many windows
  std::string max_memory;                // "16G": the most the pass may use; empty: what the device has
};

// A run stopped by SIGINT or SIGTERM (or --stop-after) saves its state in --out and
// throws RunStopped; the same job with `resume` = that directory continues it and gives
// exactly the numbers of a run never stopped (same threads and device).
// Without a model (and without activations) the bundled default model is analysed
// (models/default, or $POSGEOM_DEFAULT_MODEL); without a corpus, kDefaultCorpus.
void runAnalyzeJob(const AnalyzeJob& job);
std::filesystem::path defaultModelDir();
// Present on every Debian system (base-files): the licence texts, one document each.
inline constexpr const char* kDefaultCorpus = "/usr/share/common-licenses";

// The same positional metrics for the fixed sinusoidal embedding of "Attention is all you
// need" (dim D, T positions): the paper's point of comparison. PE(t, 2i) = sin(t / 10000^(2i/D)),
// PE(t, 2i+1) = cos(...); P is PE minus its mean over positions.
void runSinusoidalBaseline(int64_t dim, int64_t seq_len, const std::filesystem::path& out, const ReportOptions& report,
                           bool force = false);

struct MergeJob {
  std::vector<std::filesystem::path> states;
  std::filesystem::path out = "posgeom-report";
  ReportOptions report;
  anova::SampleCaps caps;
  std::string model;  // with states made by --heads: the model, to analyse the heads again
  bool force = false;
};

// Merges state files of shards into the report one run over all windows would give.
void runMergeJob(const MergeJob& job);

}  // namespace posgeom::pipeline
