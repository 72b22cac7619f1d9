#pragma once
// The windows an analysis reads, cut as `analyze` cuts them (its plan, tokenizer, corpus
// and sampler), for a forward pass run elsewhere: the Python package's, where transformers,
// TransformerLens or nnsight hold the model. The settings are the ones analyze's state
// records, so a state accumulated from these windows merges with analyze's shards.
// Torch-free.
#include <memory>
#include <nlohmann/json.hpp>

#include "posgeom/corpus/token_stream.h"
#include "posgeom/corpus/window_sampler.h"
#include "posgeom/pass/options.h"
#include "posgeom/pass/plan.h"
#include "posgeom/pass/window_batches.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::pass {

// The tokenizer of a run (none for ids: a generated or pre-tokenized corpus), with the
// plan's window framing set from it; before the weights: it is small, and a bad one is bad input.
std::unique_ptr<tokenize::Tokenizer> runTokenizer(const AnalyzeOptions& options, PassPlan& plan);

class WindowSource {
 public:
  // Judges the options as analyze does (InputError naming the option or file) and opens
  // the corpus. A hub name is resolved (and downloaded) as analyze's --model: the model's
  // weights are read for its fingerprint, which a merge compares.
  explicit WindowSource(const AnalyzeOptions& options);
  ~WindowSource();
  WindowSource(const WindowSource&) = delete;
  WindowSource& operator=(const WindowSource&) = delete;

  const PassPlan& plan() const { return plan_; }
  // What analyze's state records for these options (runSettings).
  const nlohmann::json& settings() const { return settings_; }
  // The next batch of at most the plan's batch size; empty at the end.
  WindowBatch next();

 private:
  PassPlan plan_;
  std::unique_ptr<tokenize::Tokenizer> tokenizer_;
  nlohmann::json settings_;
  std::unique_ptr<corpus::TokenStream> stream_;
  std::unique_ptr<corpus::WindowSampler> sampler_;
  std::unique_ptr<WindowBatches> batches_;
};

}  // namespace posgeom::pass
