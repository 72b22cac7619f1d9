#include <algorithm>
#include <memory>

#include "commands.h"
#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/baseline_job.h"
#include "posgeom/jobs/merge_job.h"
#include "posgeom/pass/memory_estimate.h"
#include "typed_option.h"

namespace posgeom::cli {
namespace {

void addReportOptions(CLI::App* sub, pass::ReportOptions& r) {
  sub->add_option(option::kScreenotK, r.screenot_k,
                  "ScreeNOT upper bound on the signal rank (>= 1; below half the window; default 20, cut to fit shorter "
                  "windows and narrower models)")
      ->check(atLeast(1))
      ->each([&r](const std::string&) { r.screenot_k_given = true; });
  addTypedOption(sub, option::kScreenotStrategy, r.screenot_strategy, metrics::parseScreeNotStrategy, "0, w or i (default i)");
  sub->add_option(option::kLowfreqK, r.lowfreq_k,
                  "size of the low-frequency DCT block, 1 .. the window's positions (default: 10, or all of a shorter window)")
      ->check(atLeast(1));
}

void addAnalyzeOptions(CLI::App* sub, pass::AnalyzeOptions& o_ref) {
  auto* o = &o_ref;
  sub->add_option(option::kModel, o->model, "model directory or Hugging Face hub name");
  sub->add_option(option::kRevision, o->revision, "of a hub name: branch, tag or commit (default main), from the Hugging Face cache or the hub");
  sub->add_option(option::kCorpus, o->corpus.path, "text, directory, JSON Lines, '-', .bin/.npy ids, 'random', or 'repeated-random' (the induction probe)");
  sub->add_option(option::kActivations, o->activations, "hidden states made elsewhere: hidden [L,N,T,d] or hidden.<l> [N,T,d]");
  sub->add_option(option::kTokenizer, o->tokenizer, "tokenizer directory (default: the model's)");
  addTypedOption(sub, option::kLayer, o->layers, [](const std::string& s) { return pass::parseLayerSelection(s); },
                 "all, or hidden-state indices like 0,3,5 (default all)");
  sub->add_option(option::kSeqLen, o->seq_len, "window length T >= 2 (default: min(512, model maximum))")->check(atLeast(2));
  sub->add_option(option::kNumSeqs, o->num_seqs, "number of windows >= 1 (default: all)")->check(atLeast(1));
  sub->add_option(option::kBatchSize, o->batch_size,
                  "windows per forward pass (0: chosen, about 2048 tokens on a CPU, 32768 on a GPU, within memory)")
      ->capture_default_str();
  sub->add_option(option::kSkipFirst, o->skip_first, "positions dropped from every statistic (>= 0, below the window)")
      ->check(atLeast(0))
      ->capture_default_str();
  addDeviceOptions(sub, o->device, o->dtype);
  addTypedOption(sub, option::kSampling, o->sampling, [](const std::string& s) { return pass::parseSampling(s); },
                 "sequential or random (default sequential)");
  sub->add_option(option::kSeed, o->seed)->capture_default_str();
  sub->add_flag(option::kCrossDocuments, o->cross_documents, "let windows span document boundaries");
  sub->add_option(option::kWindowsPerDocument, o->windows_per_document,
                  "at most this many windows from each document (balanced labels; 0: no limit)");
  sub->add_flag("!--no-special-tokens", o->special_tokens, "do not frame windows with BOS / [CLS] ... [SEP]");
  sub->add_flag(option::kCausal, o->causal, "causal mask for bidirectional models (BERT)");
  addTypedOption(sub, option::kShard, o->shard, [](const std::string& s) { return pass::parseShard(s); },
                 "i/n: process every n-th window, starting at i");
  sub->add_flag(option::kHeads, o->heads, "positional kernels, ETC and class of every attention head");
  sub->add_option(option::kKernelSkip, o->head_options.kernel_skip, "keys before this position are outside the kernels (>= 0, below the window)")
      ->check(atLeast(0))
      ->capture_default_str();
  addTypedOption(sub, option::kKernelQuery, o->head_options.query, heads::parseQueryMode,
                 "kernel queries: sampled (from the corpus, averaged) or mean (embedding) (default sampled)");
  sub->add_option(option::kHeadSamples, o->caps.attention_samples,
                  "sequences whose attention inputs feed the sampled kernels, QK decomposition and sparsity (>= 1)")
      ->check(atLeast(1))
      ->capture_default_str();
  addTypedOption(sub, option::kQkHeads, o->head_options.qk_maps, heads::parseHeadList,
                 "BLOCK.HEAD,...: heads (0-based block, as in 'Head 5.1') whose QK decomposition maps and W_QK in the "
                 "positional basis the report shows");
  sub->add_flag(option::kSaveKernels, o->head_options.keep_kernels,
                "with --heads: every head's kernel at every query into kernels_B<b>.safetensors ([heads, T, T] float32, "
                "8 T^2 bytes a head)");
  sub->add_flag(option::kNeurons, o->neurons,
                "with --heads: block 0's contextual neurons from the weights (neurons.csv; GPT-2, BERT, RoBERTa, Llama-style)");
  sub->add_option(option::kContextualBelow, o->head_options.contextual_cv,
                  "a broad head is contextual when its softmax denominator's CV is below this")
      ->capture_default_str();
  sub->add_option(option::kLocalBelow, o->head_options.thresholds.local, "a head is local when ETC/keys is below this")->capture_default_str();
  sub->add_option(option::kUniformAbove, o->head_options.thresholds.uniform, "a head is uniform when ETC/keys is above this")->capture_default_str();
  sub->add_option(option::kTextField, o->corpus.text.text_field, "JSON Lines text field")->capture_default_str();
  sub->add_option(option::kLabelField, o->corpus.text.label_field, "JSON Lines label field");
  sub->add_option(option::kTokenDtype, o->corpus.token_dtype, "dtype of a .bin corpus (uint16, uint32)");
  sub->add_flag(option::kStrict, o->corpus.text.strict, "fail on malformed JSON Lines rows (default: skip and count them)");
  sub->add_option(option::kContextCap, o->caps.contexts, "context means kept per layer (>= 0)")->check(atLeast(0))->capture_default_str();
  sub->add_flag("!--no-second-moment", o->second_moment, "skip the d x d moment (no relative norm or cvec spectrum)");
  sub->add_flag(option::kLayerCosines, o->layer_cosines,
                "the cosine between every pair of layers, token by token (the paper's Appendix B.2, with --corpus random)");
  sub->add_option(option::kOut, o->out, "report directory")->capture_default_str();
  sub->add_flag(option::kForce, o->force, "write into --out even if it is not empty");
  sub->add_option(option::kResume, o->resume, "continue the stopped run whose --out this is (same options otherwise)");
  sub->add_option(option::kSaveEvery, o->save_every, "save the state every N windows (default: every 10 minutes)");
  sub->add_option(option::kStopAfter, o->stop_after, "stop after N windows with the state saved, to --resume later");
  addTypedOption(sub, option::kMaxMemory, o->max_memory,
                 [](const std::string& s) { return std::optional<int64_t>(parseByteSize(s, option::kMaxMemory)); },
                 "the most the pass may use, like 16G (default: what the device has)");
  sub->add_flag(option::kLayerMajor, o->layer_major,
                "run block by block: every window of a wave through block b, then block b + 1 (the same numbers)");
  sub->add_option(option::kWave, o->wave, "with --layer-major: windows a wave holds (default: as many as memory allows)");
  sub->add_option(option::kDistInit, o->dist_init,
                  "under torchrun or srun: where the ranks meet: env (the launcher's MASTER_ADDR/PORT or first node), "
                  "tcp://HOST:PORT, file://PATH, or none (run alone)")
      ->capture_default_str();
  sub->add_option(option::kDistTimeout, o->dist_timeout_s,
                  "seconds a rank waits for the others (a collective, the rendezvous) before it names them and stops")
      ->capture_default_str();
  addReportOptions(sub, o->report);
}

}  // namespace

pass::AnalyzeOptions analyzeOptionsFrom(const std::vector<std::pair<std::string, std::string>>& options,
                                        const std::string& where) {
  pass::AnalyzeOptions o;
  CLI::App app{"analyze"};
  addAnalyzeOptions(&app, o);
  std::vector<std::string> args;
  for (const auto& [key, value] : options) {
    args.push_back("--" + key);
    if (!value.empty()) args.push_back(value);
  }
  std::reverse(args.begin(), args.end());  // CLI11 takes a vector of arguments last to first
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    throw InputError(where, e.what());
  }
  o.corpus.seed = o.seed;
  return o;
}

void addAnalyzeCommand(CLI::App& app, std::vector<Command>& commands) {
  auto o = std::make_shared<pass::AnalyzeOptions>();
  auto* sub = app.add_subcommand("analyze", "decompose every selected layer into position, context and residual");
  addAnalyzeOptions(sub, *o);
  commands.push_back({sub, [o, sub] {
                        if (!o->resume.empty() && sub->count(option::kOut) && o->out != o->resume)
                          throw InputError(option::kResume, "continues in its own directory; leave out --out or give the same one");
                        o->corpus.seed = o->seed;
                        jobs::runAnalyzeJob(*o);
                      }});
  commands.back().runs_model = true;

  struct BaselineOptions {
    int64_t dim = 768;
    int64_t seq_len = 512;
    std::filesystem::path out = "posgeom-baseline";
    pass::ReportOptions report;
    bool force = false;
  };
  auto baseline = std::make_shared<BaselineOptions>();
  auto* bsub = app.add_subcommand("baseline", "positional metrics of a fixed embedding, for comparison");
  auto* sinusoidal = bsub->add_subcommand("sinusoidal", "the sinusoidal embedding of the original Transformer");
  bsub->require_subcommand(1);
  sinusoidal->add_option(option::kDim, baseline->dim)->capture_default_str();
  sinusoidal->add_option(option::kSeqLen, baseline->seq_len)->capture_default_str();
  sinusoidal->add_option(option::kOut, baseline->out, "report directory")->capture_default_str();
  sinusoidal->add_flag(option::kForce, baseline->force, "write into --out even if it is not empty");
  addReportOptions(sinusoidal, baseline->report);
  commands.push_back({bsub, [baseline] {
                        jobs::runSinusoidalBaseline(baseline->dim, baseline->seq_len, baseline->out, baseline->report, baseline->force);
                      }});

  auto merge = std::make_shared<jobs::MergeJob>();
  auto* msub = app.add_subcommand("merge", "merge state files of shards into one report");
  msub->add_option("states", merge->states, "state.safetensors files")->required();
  msub->add_option(option::kOut, merge->out, "report directory")->capture_default_str();
  msub->add_flag(option::kForce, merge->force, "write into --out even if it is not empty");
  msub->add_flag(option::kPartial, merge->partial,
                 "merge stopped states and a split with shards missing (the report records it as partial)");
  msub->add_option(option::kContextCap, merge->caps.contexts, "context means kept per layer (>= 0)")
      ->check(atLeast(0))
      ->capture_default_str();
  msub->add_option(option::kModel, merge->model, "the states' model, to analyse the heads of states made with --heads");
  auto merge_revision = std::make_shared<std::string>();
  msub->add_option(option::kRevision, *merge_revision, "of --model's hub name: branch, tag or commit (default main), from the Hugging Face cache or the hub");
  addReportOptions(msub, merge->report);
  commands.push_back({msub, [merge, merge_revision] {
                        // The snapshot --revision names, found as analyze finds it; the job reads that directory.
                        if (!merge->model.empty() && !merge_revision->empty())
                          merge->model = hub::modelDirectory(merge->model, *merge_revision, hub::ModelParts::kWeights, io::processEnv()).string();
                        jobs::runMergeJob(*merge);
                      }});
}

}  // namespace posgeom::cli
