#include "posgeom/pass/window_source.h"

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/model/architecture.h"
#include "posgeom/pass/run_settings.h"

namespace posgeom::pass {
namespace fs = std::filesystem;

std::unique_ptr<tokenize::Tokenizer> runTokenizer(const AnalyzeOptions& o, PassPlan& plan) {
  if (corpus::isGenerated(o.corpus.path) || corpus::isPretokenized(o.corpus.path)) return nullptr;
  const fs::path from = o.tokenizer.empty() ? plan.model_dir : o.tokenizer;
  auto tokenizer = tokenize::loadTokenizer(from);
  if (tokenizer->vocabSize() > plan.config.vocab_size)
    throw InputError(from.string(), "the tokenizer's " + std::to_string(tokenizer->vocabSize()) +
                                        " ids do not fit the model's embedding of " + std::to_string(plan.config.vocab_size));
  if (o.special_tokens) plan.windows.framing = tokenizer->framing();
  return tokenizer;
}

WindowSource::WindowSource(const AnalyzeOptions& o) {
  if (o.corpus.path.empty()) throw InputError(option::kCorpus, "is needed with a model (a path, '-', or 'random')");
  if (!corpus::isGenerated(o.corpus.path)) corpus::corpusFiles(o.corpus.path);
  validateOptions(o);
  const auto model_dir = hub::modelDirectory(o.model, o.revision, hub::ModelParts::kConfig, io::processEnv());
  plan_ = planPass(o, model_dir, model::loadModelConfig(model_dir));
  hub::withWeights(o.model, o.revision, plan_.model_dir, io::processEnv());
  tokenizer_ = runTokenizer(o, plan_);
  settings_ = runSettings(o, plan_, tokenizer_.get());
  corpus::CorpusOptions corpus_options = o.corpus;
  corpus_options.repeat_period = plan_.repeat_period;
  stream_ = corpus::openCorpus(corpus_options, tokenizer_.get(), plan_.config.vocab_size);
  sampler_ = std::make_unique<corpus::WindowSampler>(*stream_, plan_.windows);
  batches_ = std::make_unique<WindowBatches>(*sampler_, *stream_, plan_.pass.batch_size);
}

WindowSource::~WindowSource() = default;  // the batches (their reading thread) go first

WindowBatch WindowSource::next() { return batches_->next(); }

}  // namespace posgeom::pass
