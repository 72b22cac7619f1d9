#include "posgeom/jobs/analyze_job.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <map>
#include <optional>

#include "posgeom/anova/state_file.h"
#include "posgeom/anova/state_merge.h"
#include "posgeom/base/error.h"
#include "posgeom/base/progress.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/io/fingerprint.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/jobs/distributed_analyze.h"
#include "posgeom/jobs/output_directory.h"
#include "posgeom/jobs/report_writer.h"
#include "posgeom/model/architecture.h"
#include "posgeom/pass/activations_pass.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/heads_stage.h"
#include "posgeom/pass/neurons_stage.h"
#include "posgeom/pass/rank_reduce.h"
#include "posgeom/report/neuron_tables.h"
#include "posgeom/runtime/rank_group.h"
#include "posgeom/runtime/threads.h"
#include "posgeom/tokenize/token_names.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

constexpr double kSaveIntervalS = 600;  // without --save-every

// What a run computes, recorded in its state (resume compares it) and summary.
nlohmann::json runSettings(const pass::AnalyzeOptions& o, const pass::PassPlan& plan, const tokenize::Tokenizer* tokenizer) {
  nlohmann::json s = {{"tool", "posgeom"},
                      {"source", "model"},
                      {"model", plan.model_dir.string()},
                      {"model_type", plan.config.model_type},
                      {"corpus", o.corpus.path},
                      {"tokenizer", tokenizer ? tokenizer->describe() : std::string("none (ids)")},
                      {"seq_len", plan.pass.seq_len},
                      {"skip_first", o.skip_first},
                      {"num_seqs", o.num_seqs},
                      {"batch_size", o.batch_size},
                      {"device", o.device.str()},
                      {"dtype", runtime::computeDtypeName(o.dtype)},
                      {"sampling", pass::samplingName(o.sampling)},
                      {"seed", o.seed},
                      {"cross_documents", o.cross_documents},
                      {"windows_per_document", o.windows_per_document},
                      {"special_tokens", o.special_tokens && tokenizer != nullptr},
                      {"causal", plan.causal},
                      {"layer_selection", plan.pass.accumulator.layers},
                      {"second_moment", o.second_moment},
                      {"context_cap", o.caps.contexts},
                      {"dim", plan.config.hidden_size}};
  s["shard"] = plan.shard.str();
  // What ran where the options left it to posgeom (--batch-size 0, --threads 0): beside the
  // requested values, not instead of them, and not part of the run's identity.
  s["effective"] = {{"batch_size", plan.pass.batch_size}, {"threads", runtime::intraOpThreads()}};
  // Identity by content, not path: resume and merge compare these, never "model"/"corpus".
  s["model_fingerprint"] = io::modelFingerprint(plan.model_dir);
  // Files only: a stream (stdin, a FIFO) cannot be read twice; its tokens' hash is checked
  // on resume instead.
  if (!corpus::isGenerated(o.corpus.path) && o.corpus.path != "-") {
    std::vector<fs::path> files;
    for (const auto& f : corpus::corpusFiles(o.corpus.path)) files.emplace_back(f);
    if (std::all_of(files.begin(), files.end(), [](const fs::path& f) { return fs::is_regular_file(f); }))
      s["corpus_fingerprint"] = io::fingerprintFiles(files);
  }
  if (plan.heads) s["head_options"] = pass::headSettingsJson(*plan.heads, o.caps.attention_samples);
  // A hub snapshot's commit (what --revision resolved to, or main's): states of another
  // revision do not resume.
  if (const auto commit = io::snapshotCommit(plan.model_dir); !commit.empty()) s["model_commit"] = commit;
  return s;
}

// Progress, periodic and final saves, and stops (signals, --stop-after) of analyze's pass.
// As one rank of several, every step is agreed by all (a stop or save anywhere is one
// everywhere; --stop-after and --save-every count the windows of all ranks), the state
// is the reduction of all ranks' statistics, and rank 0 alone writes it.
class AnalyzeHooks final : public pass::PassHooks {
 public:
  AnalyzeHooks(const pass::AnalyzeOptions& o, const OutputDirectory* output, runtime::RankGroup* ranks,
               pass::AnalysisPass& pass, anova::AnalysisState& state, double load_s, double forward_s_before)
      : o_(o),
        state_file_(output ? output->work() / kStateFile : fs::path()),
        ranks_(ranks),
        pass_(pass),
        state_(state),
        load_s_(load_s),
        forward_s_before_(forward_s_before),
        saved_at_(pass.windows()),
        all_windows_(pass.windows()),
        progress_("analyze", o.num_seqs > 0 ? o.num_seqs / pass.plan().shard.count : 0, "windows") {}

  void afterBatch(int64_t windows) override { progress_.update(windows, windows * pass_.plan().pass.seq_len); }
  bool stopRequested(int64_t windows) override {
    return signals_.received() != 0 || (o_.stop_after > 0 && windows >= o_.stop_after);
  }
  bool saveDue(int64_t windows) override {
    return o_.save_every > 0 ? windows - saved_at_ >= o_.save_every : secondsSince(last_save_) >= kSaveIntervalS;
  }
  pass::StepDecision decide(int64_t windows, bool corpus_ended) override {
    if (!ranks_) return PassHooks::decide(windows, corpus_ended);
    const auto sums = ranks_->sumAll({corpus_ended ? 1 : 0, signals_.received() != 0 ? 1 : 0,
                                      o_.save_every == 0 && secondsSince(last_save_) >= kSaveIntervalS ? 1 : 0, windows});
    all_windows_ = sums[3];
    another_rank_signalled_ = sums[1] > 0;
    const bool stop = sums[1] > 0 || (o_.stop_after > 0 && all_windows_ >= o_.stop_after);
    const bool all_ended = sums[0] == ranks_->world();
    const bool save = stop || (!all_ended && (sums[2] > 0 || (o_.save_every > 0 && all_windows_ - saved_at_ >= o_.save_every)));
    return {save, stop, all_ended && !stop};
  }
  void save(int64_t windows) override {
    snapshot(false);
    saved_at_ = ranks_ ? all_windows_ : windows;
    last_save_ = Clock::now();
  }
  void stopped(int64_t windows) override {
    progress_.finish();
    const int signal = signals_.received() ? signals_.received() : another_rank_signalled_ ? SIGTERM : 0;
    const std::string where = ranks_ && !ranks_->root() ? "on rank 0, in " + o_.out.string() : state_file_.string();
    throw RunStopped((signal ? std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") +
                                   (signals_.received() ? "" : " on another rank") + " after "
                             : "--stop-after: after ") +
                         std::to_string(ranks_ ? all_windows_ : windows) + " windows; the state is " + where +
                         "; the same command with --resume " + o_.out.string() + " continues it",
                     signal ? 128 + signal : 0);
  }
  // The windows of every rank (this rank's alone when it is the only one).
  int64_t allWindows() const { return ranks_ ? all_windows_ : pass_.windows(); }

  double forwardSeconds() const { return forward_s_before_ + secondsSince(start_); }
  void finish() { progress_.finish(); }

  // The state as it stands: saved every --save-every windows, on a stop, and at the end.
  void snapshot(bool complete) {
    const auto& ws = pass_.windowsRead();
    const auto& ss = pass_.streamRead();
    nlohmann::json data = {{"windows", pass_.windows()},
                           {"tokens_read", ws.tokens_read},
                           {"documents", ws.documents_seen},
                           {"token_hash", pass_.hash().hex()},
                           {"invalid_utf8_replaced", ss.invalid_utf8_replaced},
                           {"skipped_rows", ss.skipped_rows},
                           {"complete", complete}};
    state_.settings["timings"] = {{"load_s", load_s_}, {"forward_and_accumulate_s", complete ? final_s_ : forwardSeconds()}};
    state_.layers = complete ? pass_.takeStatistics() : pass_.statistics();
    if (ranks_) {
      const auto start = Clock::now();
      state_.layers = pass::reduceToRoot(std::move(state_.layers), *ranks_, o_.caps);
      data = combinedData(ranks_->gatherAll(data.dump()), complete);
      state_.settings["timings"]["rank_reduce_s"] = reduce_s_ += secondsSince(start);
      if (!ranks_->root()) return;
    }
    state_.settings["data"] = data;
    state_.windows = data["windows"].get<int64_t>();
    anova::saveState(state_, state_file_);
  }
  void setFinalSeconds(double s) { final_s_ = s; }
  // A resumed distributed run counts from the windows of all ranks the state holds.
  void resumedAt(int64_t all_windows) { saved_at_ = all_windows_ = all_windows; }

 private:
  const pass::AnalyzeOptions& o_;
  const fs::path state_file_;  // in the work directory: --out keeps its old report until the end
  runtime::RankGroup* ranks_;   // null: one process
  pass::AnalysisPass& pass_;
  anova::AnalysisState& state_;
  double load_s_, forward_s_before_, final_s_ = 0, reduce_s_ = 0;
  int64_t saved_at_, all_windows_;
  bool another_rank_signalled_ = false;
  Clock::time_point start_ = Clock::now(), last_save_ = start_;
  const StopSignals signals_;
  ProgressLine progress_;
};

struct ModelAnalysis {
  anova::AnalysisState state;
  std::vector<heads::HeadReport> head_reports;
  ReportExtras extras;
  pass::ReportOptions report;  // fitted to the window and width
};

// The ids of the windows whose attention inputs the state sampled (block 0's), read again
// from the corpus in the order of the samples.
std::vector<std::vector<int32_t>> sampledWindowIds(const corpus::CorpusOptions& options, const tokenize::Tokenizer* tokenizer,
                                                   const pass::PassPlan& plan, const corpus::WindowOptions& windows,
                                                   const anova::AnalysisState& state) {
  std::vector<int64_t> wanted;
  for (const auto& l : state.layers)
    if (l.layer == 1) wanted = l.attention_sample_windows;
  std::map<int64_t, std::vector<int32_t>> found;
  const int64_t last = wanted.empty() ? -1 : *std::max_element(wanted.begin(), wanted.end());
  auto stream = corpus::openCorpus(options, tokenizer, plan.config.vocab_size);
  corpus::WindowSampler sampler(*stream, windows);
  while (static_cast<int64_t>(found.size()) < static_cast<int64_t>(wanted.size())) {
    auto window = sampler.next();
    if (!window || window->index > last) break;
    if (std::find(wanted.begin(), wanted.end(), window->index) != wanted.end()) found[window->index] = std::move(window->ids);
  }
  if (found.size() != wanted.size())
    throw InputError(options.path, "changed since the pass: its sampled windows could not be read again (--neurons)");
  std::vector<std::vector<int32_t>> ids;
  for (const auto w : wanted) ids.push_back(found.at(w));
  return ids;
}

// `output` and `ranks`: rank 0 of a distributed run, or one process, has an output; the
// other ranks of one (`ranks` not null) read the state from rank 0 and write nothing.
ModelAnalysis analyzeModel(const pass::AnalyzeOptions& o, const OutputDirectory* output, runtime::RankGroup* ranks) {
  // A missing corpus is found before the model takes its time to load.
  if (o.corpus.path.empty()) throw InputError("--corpus", "is needed with --model (a path, '-', or 'random')");
  if (!corpus::isGenerated(o.corpus.path)) corpus::corpusFiles(o.corpus.path);
  std::optional<anova::AnalysisState> saved;
  const auto state_path = !output ? fs::path(o.resume) : o.resume.empty() ? output->work() / kStateFile : output->resumeState();
  if (!o.resume.empty() && output) {
    saved = anova::loadState(state_path);
    requireSameWorld(*saved, ranks, state_path.string());
  }
  auto t0 = Clock::now();
  const auto model_dir = io::resolveModelDir(o.model, io::processEnv(), o.revision);
  // Each rank on its own GPU: cuda:LOCAL_RANK of the GPUs it sees (one, where the launcher
  // gives each task its own through CUDA_VISIBLE_DEVICES).
  pass::AnalyzeOptions rank_options = o;
  if (ranks && o.device.isCuda())
    rank_options.device.index = ranks->launch().local_rank % std::max(1, runtime::cudaDeviceCount());
  auto plan = pass::planPass(rank_options, model_dir, model::loadModelConfig(model_dir));
  // The tokenizer before the weights: it is small, and a bad one is bad input.
  std::unique_ptr<tokenize::Tokenizer> tokenizer;
  if (!corpus::isGenerated(o.corpus.path) && !corpus::isPretokenized(o.corpus.path))
    tokenizer = tokenize::loadTokenizer(o.tokenizer.empty() ? model_dir : o.tokenizer);
  if (tokenizer && tokenizer->vocabSize() > plan.config.vocab_size)
    throw InputError((o.tokenizer.empty() ? model_dir : o.tokenizer).string(),
                     "the tokenizer's " + std::to_string(tokenizer->vocabSize()) + " ids do not fit the model's embedding of " +
                         std::to_string(plan.config.vocab_size));
  if (tokenizer && o.special_tokens) plan.windows.framing = tokenizer->framing();
  anova::AnalysisState state;
  state.settings = runSettings(o, plan, tokenizer.get());
  const corpus::WindowOptions all_windows = plan.windows;  // of the shard asked, over all ranks
  if (ranks) {
    requireSameSettings(*ranks, state.settings);
    state.settings["distributed"] = distributedSettings(*ranks);
    takeRankShard(plan, *ranks);
  }
  if (saved) {
    // The model and corpus by content: another path to the same files resumes; other
    // files at the same path do not.
    const auto same = [&](const char* key) { return saved->settings.value(key, "") == state.settings.value(key, ""); };
    if (!same("model_fingerprint"))
      throw InputError(o.model, "is not the model the saved run used (its config or weights differ; " +
                                    state_path.string() + ")");
    if (!same("corpus_fingerprint"))
      throw InputError(o.corpus.path, "is not the corpus the saved run read (its files differ)");
  }
  if (saved)
    if (const auto difference = anova::settingsDifference(saved->settings, state.settings, "saved", "now");
        !difference.empty())
      throw InputError(state_path.string(), "was saved by a run with other settings: " + difference);

  // A distributed resume: rank 0's state, shared out (this rank's windows, and its part of
  // the statistics); before the weights, so that a state that does not fit fails fast.
  std::optional<anova::AnalysisState> resumed = std::move(saved);
  int64_t resumed_all_windows = 0;
  if (ranks && !o.resume.empty()) {
    const auto record = nlohmann::json::parse(ranks->broadcastFromRoot(resumed ? resumed->settings.dump() : std::string("{}")));
    resumed_all_windows = record["data"].value("windows", int64_t{0});
    const auto& mine = record["data"]["ranks"].at(static_cast<std::size_t>(ranks->rank()));
    const pass::Shard shard = plan.shard;
    auto share = pass::resumeShare(resumed ? resumed->layers : std::vector<anova::LayerStatistics>{}, *ranks,
                                   [shard](int64_t window) { return window % shard.count == shard.index; });
    if (!resumed) resumed.emplace();
    resumed->settings = record;
    resumed->settings["data"]["token_hash"] = mine["token_hash"];
    resumed->windows = mine["windows"].get<int64_t>();
    resumed->layers = std::move(share);
  }

  pass::AnalysisPass pass(plan, pass::loadPassModel(plan));
  if (o.neurons && !pass::hasNeuronCircuit(pass.model()))
    throw InputError("--neurons", "is not available for model_type '" + plan.config.model_type + "' (it is for gpt2, bert, roberta and the Llama-style families: llama, mistral, qwen2, qwen3, gemma, phi3, olmo without clip_qkv)");
  const double load_s = secondsSince(t0);
  corpus::CorpusOptions corpus_options = o.corpus;
  corpus_options.repeat_period = plan.repeat_period;
  auto stream = corpus::openCorpus(corpus_options, tokenizer.get(), plan.config.vocab_size);
  corpus::WindowSampler sampler(*stream, plan.windows);
  double forward_s = 0;
  if (resumed) {
    pass.resumeFrom(*resumed, sampler, o.corpus.path, state_path.string());
    forward_s = resumed->settings["timings"].value("forward_and_accumulate_s", 0.0);
    spdlog::info("resuming after {} windows from {}", pass.windows(), state_path.string());
  }
  AnalyzeHooks hooks(o, output, ranks, pass, state, load_s, forward_s);
  if (ranks && resumed) hooks.resumedAt(resumed_all_windows);
  {
    pass::WindowBatches batches(sampler, *stream, plan.pass.batch_size);  // the next batch is read during this one's pass
    pass.runAll(batches, hooks);
  }
  hooks.finish();
  forward_s = hooks.forwardSeconds();
  const auto& ws = pass.windowsRead();
  const auto& ss = pass.streamRead();
  spdlog::info("{} windows of {} tokens ({} tokens read, {} documents) in {:.1f} s", pass.windows(), plan.pass.seq_len,
               ws.tokens_read, ws.documents_seen, forward_s);
  if (ss.invalid_utf8_replaced) spdlog::warn("{} invalid UTF-8 sequences were replaced", ss.invalid_utf8_replaced);
  if (ss.skipped_rows) spdlog::warn("{} malformed JSON Lines rows were skipped", ss.skipped_rows);
  // On every rank alike (the count is of all ranks): a rank without windows is no error.
  if (hooks.allWindows() == 0) throw InputError(o.corpus.path, "this shard received no window");
  if (hooks.allWindows() == 1 && (!ranks || ranks->root()))
    spdlog::warn("{}: {}{}", plan.shard.count > 1 ? "--shard " + plan.shard.str() : o.corpus.path, pass::singleWindowWarning(),
                 plan.shard.count > 1 ? "; merging the shards' states gives the whole run's report" : "");
  // Saved before the heads and the report: a stop during those resumes with no pass at all.
  hooks.setFinalSeconds(forward_s);
  hooks.snapshot(true);
  if (ranks && !ranks->root()) return {};  // rank 0 has the statistics of all, and writes

  ModelAnalysis result{std::move(state), {}, {}, plan.report};
  if (plan.heads) {
    const auto start = Clock::now();
    result.head_reports = pass::analyzeHeads(pass.model(), result.state, *plan.heads, plan.causal);
    result.state.settings["timings"]["heads_s"] = secondsSince(start);
  }
  if (plan.heads && o.neurons) {
    const auto start = Clock::now();
    std::vector<heads::HeadReport> first_block;
    for (const auto& h : result.head_reports)
      if (h.block == 0) first_block.push_back(h);
    const auto ids = sampledWindowIds(corpus_options, tokenizer.get(), plan, all_windows, result.state);
    const auto analysis = pass::analyzeNeurons(pass.model(), result.state, first_block, ids, {10, 0.8, plan.heads->kernel_skip});
    const auto names = tokenize::readTokenNames(o.tokenizer.empty() ? plan.model_dir : o.tokenizer);
    result.extras.summary["neurons"] = report::neuronsJson(analysis, names);
    result.extras.files.emplace_back("neurons.csv", report::neuronsCsv(analysis, names));
    if (!o.save_kernels)  // kept for the neurons only
      for (auto& h : result.head_reports) h.kernel.resize(0, 0), h.mean_query_kernel.resize(0, 0);
    result.state.settings["timings"]["neurons_s"] = secondsSince(start);
  }
  return result;
}

}  // namespace

fs::path defaultModelDir() {
  if (const char* env = std::getenv("POSGEOM_DEFAULT_MODEL"); env && *env) return env;
  return POSGEOM_DEFAULT_MODEL_DIR;
}

void runAnalyzeJob(const pass::AnalyzeOptions& requested) {
  pass::AnalyzeOptions o = requested;
  const bool from_activations = !o.activations.empty();
  if (!from_activations && o.model.empty()) {
    o.model = defaultModelDir().string();
    if (!fs::exists(o.model + "/config.json"))
      throw InputError(o.model, "the bundled default model is missing; give --model (or set POSGEOM_DEFAULT_MODEL)");
    spdlog::info("no --model: using the bundled default model {}", o.model);
  }
  if (!from_activations && o.corpus.path.empty()) {
    o.corpus.path = kDefaultCorpus;
    spdlog::info("no --corpus: using {}", kDefaultCorpus);
  }
  pass::validateOptions(o);  // before the long part
  if (!o.resume.empty()) o.out = o.resume;
  // One rank of several (torchrun, srun, --dist-init): only rank 0 has an output directory.
  if (from_activations && runtime::detectLaunch(processEnv(), o.dist_init).distributed())
    throw InputError("--activations", "is analysed by one process: start it without torchrun or srun (or give --dist-init none)");
  auto* ranks = from_activations ? nullptr
                                 : runtime::joinRanks(o.dist_init, std::chrono::seconds(o.dist_timeout_s), o.device);
  if (ranks && !ranks->root()) {
    analyzeModel(o, nullptr, ranks);
    return;
  }
  OutputDirectory output(o.out, !o.resume.empty() ? OutMode::kResume : o.force ? OutMode::kForce : OutMode::kNew);
  ModelAnalysis analysis = from_activations ? ModelAnalysis{pass::analyzeActivations(o), {}, {}, {}} : analyzeModel(o, &output, ranks);
  if (from_activations) {
    anova::saveState(analysis.state, output.work() / kStateFile);
    analysis.report = pass::fitReportOptions(o.report, analysis.state.layers);
    if (analysis.report.screenot_k != o.report.screenot_k)
      spdlog::info("--screenot-k: {} (the default {} does not fit the hidden states' positions and width)",
                   analysis.report.screenot_k, o.report.screenot_k);
  }
  auto report = analysis.report;
  report.end_device = o.device;  // the end stage where the statistics were gathered
  writeReport(analysis.state, report, output.work(), analysis.head_reports, analysis.extras);
  output.commit();
  spdlog::info("report in {}", o.out.string());
}

}  // namespace posgeom::jobs
