#include "posgeom/pass/analysis_run.h"

#include <memory>

#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"
#include "posgeom/base/log.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/stopwatch.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/model/architecture.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/heads_stage.h"
#include "posgeom/pass/neurons_stage.h"
#include "posgeom/pass/rank_agreement.h"
#include "posgeom/pass/rank_reduce.h"
#include "posgeom/pass/run_hooks.h"
#include "posgeom/pass/run_settings.h"
#include "posgeom/pass/sampled_windows.h"
#include "posgeom/pass/window_source.h"
#include "posgeom/runtime/threads.h"
#include "posgeom/tokenize/token_names.h"

namespace posgeom::pass {
namespace fs = std::filesystem;
namespace {

// A saved state resumes only the run it was saved by: the model and corpus by content
// (another path to the same files resumes; other files at the same path do not), and every
// other setting.
void requireSameRun(const anova::AnalysisState& saved, const nlohmann::json& settings, const AnalyzeOptions& o,
                    const fs::path& state_path) {
  const auto same = [&](const char* key) { return saved.settings.value(key, "") == settings.value(key, ""); };
  if (!same("model_fingerprint"))
    throw InputError(o.model, "is not the model the saved run used (its config or weights differ; " + state_path.string() + ")");
  if (!same("corpus_fingerprint")) throw InputError(o.corpus.path, "is not the corpus the saved run read (its files differ)");
  if (const auto difference = anova::settingsDifference(saved.settings, settings, "saved", "now"); !difference.empty())
    throw InputError(state_path.string(), "was saved by a run with other settings: " + difference);
}

// A distributed resume: rank 0's state, shared out (this rank's windows, and its part of
// the statistics); before the weights, so that a state that does not fit fails fast.
// Returns the windows of all ranks the state holds.
int64_t shareResumedState(std::optional<anova::AnalysisState>& resumed, runtime::RankGroup& ranks, const Shard& shard) {
  const auto record = nlohmann::json::parse(ranks.broadcastFromRoot(resumed ? resumed->settings.dump() : std::string("{}")));
  const auto& mine = record["data"]["ranks"].at(static_cast<std::size_t>(ranks.rank()));
  auto share = resumeShare(resumed ? resumed->layers : std::vector<anova::LayerStatistics>{}, ranks,
                           [shard](int64_t window) { return window % shard.count == shard.index; });
  if (!resumed) resumed.emplace();
  resumed->settings = record;
  resumed->settings["data"]["token_hash"] = mine["token_hash"];
  resumed->windows = mine["windows"].get<int64_t>();
  resumed->layers = std::move(share);
  return record["data"].value("windows", int64_t{0});
}

void logPassEnd(const AnalysisPass& pass, double forward_s) {
  const auto& ws = pass.windowsRead();
  const auto& ss = pass.streamRead();
  // Through posgeom's log: this unit includes Torch (see base/log.h).
  log::info(std::to_string(pass.windows()) + " windows of " + std::to_string(pass.plan().pass.seq_len) + " tokens (" +
            std::to_string(ws.tokens_read) + " tokens read, " + std::to_string(ws.documents_seen) + " documents) in " +
            log::number("%.1f", forward_s) + " s");
  if (ss.invalid_utf8_replaced) log::warn(std::to_string(ss.invalid_utf8_replaced) + " invalid UTF-8 sequences were replaced");
  if (ss.skipped_rows) log::warn(std::to_string(ss.skipped_rows) + " malformed JSON Lines rows were skipped");
}

// The stages after the pass that need the model: the heads, then block 0's neurons.
void runEndStages(AnalysisRun& run, const AnalysisPass& pass, const AnalyzeOptions& o, const corpus::CorpusOptions& corpus,
                  const tokenize::Tokenizer* tokenizer, const corpus::WindowOptions& all_windows) {
  const auto& plan = pass.plan();
  if (!plan.heads) return;
  auto start = SteadyClock::now();
  const auto layers = run.layers();
  run.head_reports = analyzeHeads(pass.model(), layers, *plan.heads, plan.causal);
  run.state.settings["timings"]["heads_s"] = secondsSince(start);
  if (!o.neurons) return;
  start = SteadyClock::now();
  std::vector<heads::HeadReport> first_block;
  for (const auto& h : run.head_reports)
    if (h.block == 0) first_block.push_back(h);
  const auto ids = sampledWindowIds(corpus, tokenizer, plan.config.vocab_size, all_windows, layers);
  run.neurons = analyzeNeurons(pass.model(), layers, first_block, ids, {10, 0.8, plan.heads->kernel_skip});
  run.token_names = tokenize::readTokenNames(o.tokenizer.empty() ? plan.model_dir : o.tokenizer);
  if (!o.head_options.keep_kernels)  // kept for the neurons only
    for (auto& h : run.head_reports) h.kernel.resize(0, 0), h.mean_query_kernel.resize(0, 0);
  run.state.settings["timings"]["neurons_s"] = secondsSince(start);
}

}  // namespace

AnalysisRun runAnalysis(const AnalyzeOptions& o, const RunControl& control, runtime::RankGroup* ranks) {
  // A missing corpus is found before the model takes its time to load.
  if (o.corpus.path.empty()) throw InputError(option::kCorpus, "is needed with --model (a path, '-', or 'random')");
  if (!corpus::isGenerated(o.corpus.path)) corpus::corpusFiles(o.corpus.path);
  std::optional<anova::AnalysisState> resumed;
  if (control.resumes() && control.writes()) {
    resumed = anova::loadState(control.resume_state);
    requireSameWorld(*resumed, ranks, control.resume_state.string());
  }
  const auto t0 = SteadyClock::now();
  // The config (and tokenizer) first: the plan judges the options against it before the
  // weights, most of a hub download, come.
  const auto model_dir = hub::modelDirectory(o.model, o.revision, hub::ModelParts::kConfig, io::processEnv());
  // Each rank on its own GPU: cuda:LOCAL_RANK of the GPUs it sees (one, where the launcher
  // gives each task its own through CUDA_VISIBLE_DEVICES).
  AnalyzeOptions rank_options = o;
  if (ranks && o.device.isCuda()) rank_options.device.index = ranks->launch().local_rank % std::max(1, runtime::cudaDeviceCount());
  // One process that writes its state hands a last wave's layers to files beside it as each
  // is final (a distributed run's are reduced across the ranks at the end instead).
  const auto final_layers = !ranks && control.writes() ? FinalLayers::kHandedToFiles : FinalLayers::kHeld;
  auto plan = planPass(rank_options, model_dir, model::loadModelConfig(model_dir), final_layers);
  hub::withWeights(o.model, o.revision, plan.model_dir, io::processEnv());
  const auto tokenizer = runTokenizer(o, plan);
  anova::AnalysisState state;
  state.settings = runSettings(o, plan, tokenizer.get());
  const corpus::WindowOptions all_windows = plan.windows;  // of the shard asked, over all ranks
  if (ranks) {
    requireSameSettings(*ranks, state.settings);
    state.settings["distributed"] = distributedSettings(*ranks);
    takeRankShard(plan, *ranks);
  }
  if (resumed) requireSameRun(*resumed, state.settings, o, control.resume_state);
  const int64_t resumed_all_windows = ranks && control.resumes() ? shareResumedState(resumed, *ranks, plan.shard) : 0;

  AnalysisPass pass(plan, loadPassModel(plan));
  if (plan.wave_windows > 0 && final_layers == FinalLayers::kHandedToFiles) pass.handLayersTo(control.state_file.parent_path());
  if (o.neurons && !hasNeuronCircuit(pass.model()))
    throw InputError(option::kNeurons, "is not available for model_type '" + plan.config.model_type + "' (it is for gpt2, bert, roberta and the Llama-style families: llama, mistral, qwen2, qwen3, gemma, phi3, granite, smollm3, starcoder2, stablelm without use_parallel_residual, olmo without clip_qkv)");
  const double load_s = secondsSince(t0);
  corpus::CorpusOptions corpus_options = o.corpus;
  corpus_options.repeat_period = plan.repeat_period;
  auto stream = corpus::openCorpus(corpus_options, tokenizer.get(), plan.config.vocab_size);
  corpus::WindowSampler sampler(*stream, plan.windows);
  double forward_s = 0;
  if (resumed) {
    pass.resumeFrom(*resumed, sampler, o.corpus.path, control.resume_state.string());
    forward_s = resumed->settings["timings"].value("forward_and_accumulate_s", 0.0);
    log::info("resuming after " + std::to_string(pass.windows()) + " windows from " + control.resume_state.string());
  }
  RunHooks hooks(control, ranks, pass, state, load_s, forward_s);
  if (ranks && resumed) hooks.resumedAt(resumed_all_windows);
  {
    WindowBatches batches(sampler, *stream, plan.pass.batch_size);  // the next batch is read during this one's pass
    pass.runAll(batches, hooks);
  }
  hooks.finish();
  forward_s = hooks.forwardSeconds();
  logPassEnd(pass, forward_s);
  // On every rank alike (the count is of all ranks): a rank without windows is no error.
  if (hooks.allWindows() == 0) throw InputError(o.corpus.path, "this shard received no window");
  if (hooks.allWindows() == 1 && (!ranks || ranks->root()))
    log::warn((plan.shard.count > 1 ? "--shard " + plan.shard.str() : o.corpus.path) + ": " + singleWindowWarning() +
              (plan.shard.count > 1 ? "; merging the shards' states gives the whole run's report" : ""));
  // Saved before the end stages and the report: a stop during those resumes with no pass.
  hooks.snapshot(true, forward_s);
  if (ranks && !ranks->root()) return {};  // rank 0 has the statistics of all, and writes

  AnalysisRun run{std::move(state), nullptr, {}, std::nullopt, {}, plan.report};
  if (!pass.layerFiles().empty()) run.saved = std::make_shared<const anova::StateReader>(control.state_file);
  runEndStages(run, pass, o, corpus_options, tokenizer.get(), all_windows);
  return run;
}

}  // namespace posgeom::pass
