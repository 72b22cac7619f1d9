#include <algorithm>
#include <memory>

#include "commands.h"
#include "posgeom/base/error.h"
#include "posgeom/pipeline/analyze_job.h"

namespace posgeom::cli {
namespace {

void addReportOptions(CLI::App* sub, pipeline::ReportOptions& r) {
  sub->add_option("--screenot-k", r.screenot_k, "ScreeNOT upper bound on the signal rank")->capture_default_str();
  sub->add_option("--screenot-strategy", r.screenot_strategy, "0, w or i")
      ->check(CLI::IsMember({"0", "w", "i"}))
      ->capture_default_str();
  sub->add_option("--lowfreq-k", r.lowfreq_k, "size of the low-frequency DCT block")->capture_default_str();
}

void addAnalyzeOptions(CLI::App* sub, pipeline::AnalyzeJob& job_ref) {
  auto* job = &job_ref;
  sub->add_option("--model", job->model, "model directory or Hugging Face hub name");
  sub->add_option("--corpus", job->corpus.path, "text, directory, JSON Lines, '-', .bin/.npy ids, or 'random'");
  sub->add_option("--activations", job->activations, "hidden states made elsewhere: hidden [L,N,T,d] or hidden.<l> [N,T,d]");
  sub->add_option("--tokenizer", job->tokenizer, "tokenizer directory (default: the model's)");
  sub->add_option("--layer", job->layers, "all, or hidden-state indices like 0,3,5")->capture_default_str();
  sub->add_option("--seq-len", job->seq_len, "window length T (default: min(512, model maximum))");
  sub->add_option("--num-seqs", job->num_seqs, "number of windows (default: all)");
  sub->add_option("--batch-size", job->batch_size,
                  "windows per forward pass (0: chosen, about 2048 tokens on a CPU, 32768 on a GPU, within memory)")
      ->capture_default_str();
  sub->add_option("--skip-first", job->skip_first, "positions dropped from every statistic")->capture_default_str();
  sub->add_option("--device", job->device, "cpu, cuda or cuda:N")->capture_default_str();
  sub->add_option("--dtype", job->dtype, "float32, bfloat16 or float16")->capture_default_str();
  sub->add_option("--sampling", job->sampling, "sequential or random")->capture_default_str();
  sub->add_option("--seed", job->seed)->capture_default_str();
  sub->add_flag("--cross-documents", job->cross_documents, "let windows span document boundaries");
  sub->add_option("--windows-per-document", job->windows_per_document,
                  "at most this many windows from each document (balanced labels; 0: no limit)");
  sub->add_flag("!--no-special-tokens", job->special_tokens, "do not frame windows with BOS / [CLS] ... [SEP]");
  sub->add_flag("--causal", job->causal, "causal mask for bidirectional models (BERT)");
  sub->add_option("--shard", job->shard, "i/n: process every n-th window, starting at i");
  sub->add_flag("--heads", job->heads, "positional kernels, ETC and class of every attention head");
  sub->add_option("--kernel-skip", job->kernel_skip, "keys before this position are outside the kernels")->capture_default_str();
  sub->add_option("--kernel-query", job->kernel_query, "kernel queries: sampled (from the corpus, averaged) or mean (embedding)")
      ->check(CLI::IsMember({"sampled", "mean"}))
      ->capture_default_str();
  sub->add_option("--head-samples", job->caps.attention_samples,
                  "sequences whose attention inputs feed the sampled kernels, QK decomposition and sparsity")
      ->capture_default_str();
  sub->add_option("--qk-heads", job->qk_heads, "LAYER.HEAD,...: heads whose QK decomposition maps the report shows");
  sub->add_option("--contextual-below", job->contextual_cv,
                  "a broad head is contextual when its softmax denominator's CV is below this")
      ->capture_default_str();
  sub->add_option("--local-below", job->local_threshold, "a head is local when ETC/keys is below this")->capture_default_str();
  sub->add_option("--uniform-above", job->uniform_threshold, "a head is uniform when ETC/keys is above this")->capture_default_str();
  sub->add_option("--text-field", job->corpus.text.text_field, "JSON Lines text field")->capture_default_str();
  sub->add_option("--label-field", job->corpus.text.label_field, "JSON Lines label field");
  sub->add_option("--token-dtype", job->corpus.token_dtype, "dtype of a .bin corpus (uint16, uint32)");
  sub->add_flag("--strict", job->corpus.text.strict, "fail on malformed JSON Lines rows (default: skip and count them)");
  sub->add_option("--context-cap", job->caps.contexts, "context means kept per layer")->capture_default_str();
  sub->add_flag("!--no-second-moment", job->second_moment, "skip the d x d moment (no relative norm or cvec spectrum)");
  sub->add_option("--out", job->out, "report directory")->capture_default_str();
  sub->add_flag("--force", job->force, "write into --out even if it is not empty");
  sub->add_option("--resume", job->resume, "continue the stopped run whose --out this is (same options otherwise)");
  sub->add_option("--save-every", job->save_every, "save the state every N windows (default: every 10 minutes)");
  sub->add_option("--stop-after", job->stop_after, "stop after N windows with the state saved, to --resume later");
  sub->add_option("--max-memory", job->max_memory, "the most the pass may use, like 16G (default: what the device has)");
  addReportOptions(sub, job->report);
}

}  // namespace

pipeline::AnalyzeJob analyzeJobFromOptions(const std::vector<std::pair<std::string, std::string>>& options,
                                           const std::string& where) {
  pipeline::AnalyzeJob job;
  CLI::App app{"analyze"};
  addAnalyzeOptions(&app, job);
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
  job.corpus.seed = job.seed;
  return job;
}

void addAnalyzeCommand(CLI::App& app, std::vector<Command>& commands) {
  auto job = std::make_shared<pipeline::AnalyzeJob>();
  auto* sub = app.add_subcommand("analyze", "decompose every selected layer into position, context and residual");
  addAnalyzeOptions(sub, *job);
  commands.push_back({sub, [job, sub] {
                        if (!job->resume.empty() && sub->count("--out") && job->out != job->resume)
                          throw InputError("--resume", "continues in its own directory; leave out --out or give the same one");
                        job->corpus.seed = job->seed;
                        pipeline::runAnalyzeJob(*job);
                      }});
  commands.back().runs_model = true;

  struct BaselineOptions {
    int64_t dim = 768;
    int64_t seq_len = 512;
    std::filesystem::path out = "posgeom-baseline";
    pipeline::ReportOptions report;
    bool force = false;
  };
  auto baseline = std::make_shared<BaselineOptions>();
  auto* bsub = app.add_subcommand("baseline", "positional metrics of a fixed embedding, for comparison");
  auto* sinusoidal = bsub->add_subcommand("sinusoidal", "the sinusoidal embedding of the original Transformer");
  bsub->require_subcommand(1);
  sinusoidal->add_option("--dim", baseline->dim)->capture_default_str();
  sinusoidal->add_option("--seq-len", baseline->seq_len)->capture_default_str();
  sinusoidal->add_option("--out", baseline->out, "report directory")->capture_default_str();
  sinusoidal->add_flag("--force", baseline->force, "write into --out even if it is not empty");
  addReportOptions(sinusoidal, baseline->report);
  commands.push_back({bsub, [baseline] {
                        pipeline::runSinusoidalBaseline(baseline->dim, baseline->seq_len, baseline->out, baseline->report, baseline->force);
                      }});

  auto merge = std::make_shared<pipeline::MergeJob>();
  auto* msub = app.add_subcommand("merge", "merge state files of shards into one report");
  msub->add_option("states", merge->states, "state.safetensors files")->required();
  msub->add_option("--out", merge->out, "report directory")->capture_default_str();
  msub->add_flag("--force", merge->force, "write into --out even if it is not empty");
  msub->add_option("--context-cap", merge->caps.contexts, "context means kept per layer")->capture_default_str();
  msub->add_option("--model", merge->model, "the states' model, to analyse the heads of states made with --heads");
  addReportOptions(msub, merge->report);
  commands.push_back({msub, [merge] { pipeline::runMergeJob(*merge); }});
}

}  // namespace posgeom::cli
