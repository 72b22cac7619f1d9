#include "posgeom/pipeline/analyze_job.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cmath>
#include <csignal>
#include <optional>
#include <set>
#include <sstream>

#include "posgeom/anova/accumulator.h"
#include "posgeom/anova/state_file.h"
#include "posgeom/base/error.h"
#include "posgeom/base/progress.h"
#include "posgeom/base/stop_signals.h"
#include "posgeom/corpus/document_reader.h"
#include "posgeom/corpus/window_sampler.h"
#include "posgeom/io/hub_cache.h"
#include "posgeom/io/safetensors.h"
#include "posgeom/metrics/layer_metrics.h"
#include "posgeom/metrics/screenot.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/loader.h"
#include "posgeom/model/weights.h"
#include "posgeom/pipeline/heads_stage.h"
#include "posgeom/pipeline/memory_estimate.h"
#include "posgeom/pipeline/window_batches.h"
#include "pass_options.h"
#include "posgeom/report/tables.h"

namespace posgeom::pipeline {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

std::set<int64_t> parseLayers(const std::string& spec, int64_t hidden_states) {
  std::set<int64_t> out;
  if (spec == "all") {
    for (int64_t l = 0; l < hidden_states; ++l) out.insert(l);
    return out;
  }
  std::stringstream in(spec);
  std::string item;
  while (std::getline(in, item, ',')) {
    char* end = nullptr;
    const long v = std::strtol(item.c_str(), &end, 10);
    if (item.empty() || *end != '\0' || v < 0 || v >= hidden_states)
      throw InputError("--layer", "'" + item + "' is not a hidden-state index in 0.." + std::to_string(hidden_states - 1));
    out.insert(v);
  }
  if (out.empty()) throw InputError("--layer", "no layers selected");
  return out;
}

std::pair<int64_t, int64_t> parseShard(const std::string& spec) {
  if (spec.empty()) return {0, 1};
  const auto slash = spec.find('/');
  try {
    if (slash != std::string::npos) {
      const int64_t i = std::stoll(spec.substr(0, slash)), n = std::stoll(spec.substr(slash + 1));
      if (n >= 1 && i >= 0 && i < n) return {i, n};
    }
  } catch (const std::exception&) {
  }
  throw InputError("--shard", "'" + spec + "' must be i/n with 0 <= i < n");
}

metrics::LayerMetricsOptions metricOptions(const ReportOptions& r) {
  metrics::LayerMetricsOptions o;
  o.screenot_k = r.screenot_k;
  o.screenot_strategy = metrics::parseScreeNotStrategy(r.screenot_strategy);
  o.lowfreq_k = r.lowfreq_k;
  return o;
}

// The positional basis is [positions, dim]: refuse a --screenot-k it cannot take before
// the pass rather than after it.
void checkScreeNotFits(const ReportOptions& r, int64_t positions, int64_t dim) {
  const auto o = metricOptions(r);
  metrics::checkScreeNotRank(o.screenot_k, o.screenot_strategy, std::min(positions, dim));
}

void writeReport(const anova::AnalysisState& state, const ReportOptions& options, const fs::path& out,
                 const std::vector<heads::HeadReport>& head_reports = {}) {
  const auto t0 = Clock::now();
  std::vector<metrics::LayerMetrics> layers;
  const auto metric_options = metricOptions(options);
  ProgressLine progress("metrics", static_cast<int64_t>(state.layers.size()), "layers");
  for (const auto& s : state.layers) {
    progress.update(static_cast<int64_t>(layers.size()), 0, "layer " + std::to_string(s.layer));
    layers.push_back(metrics::computeLayerMetrics(s, metric_options));
  }
  progress.finish();
  std::vector<metrics::CrossLayerMetrics> cross;
  for (std::size_t i = 1; i < layers.size(); ++i) cross.push_back(metrics::compareLayers(layers[i - 1], layers[i]));
  auto settings = state.settings;
  settings["version"] = POSGEOM_VERSION;
  settings["report"] = {{"screenot_k", options.screenot_k},
                        {"screenot_strategy", options.screenot_strategy},
                        {"lowfreq_k", options.lowfreq_k}};
  settings["timings"]["metrics_s"] = secondsSince(t0);
  report::writeTables(out, report::summaryJson(settings, layers, cross, head_reports), layers, head_reports);
}

// Refuses to mix a new report with an old one's files unless asked to. A directory this
// run creates is removed again if the run fails before writing into it.
class OutputDirectory {
 public:
  OutputDirectory(const fs::path& out, bool force) : out_(out) {
    std::error_code ec;
    if (!force && fs::is_directory(out, ec) && !fs::is_empty(out, ec))
      throw InputError(out.string(), "exists and is not empty; pass --force to write into it");
    created_ = fs::create_directories(out, ec);
    if (ec) throw InputError(out.string(), "cannot create the output directory: " + ec.message());
  }
  ~OutputDirectory() {
    std::error_code ec;
    if (created_ && fs::is_empty(out_, ec)) fs::remove(out_, ec);
  }
  OutputDirectory(const OutputDirectory&) = delete;
  OutputDirectory& operator=(const OutputDirectory&) = delete;

 private:
  fs::path out_;
  bool created_ = false;
};

// FNV-1a over the ids analyzed: identifies the data without keeping it.
struct TokenHash {
  uint64_t value = 1469598103934665603ull;
  void add(const std::vector<int32_t>& ids) {
    for (int32_t id : ids)
      for (int b = 0; b < 4; ++b) value = (value ^ ((static_cast<uint32_t>(id) >> (8 * b)) & 0xff)) * 1099511628211ull;
  }
  std::string hex() const {
    char buf[20];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(value));
    return buf;
  }
};

heads::HeadOptions headOptions(const AnalyzeJob& job) {
  heads::HeadOptions o;
  o.query = heads::parseQueryMode(job.kernel_query);
  o.kernel_skip = job.kernel_skip;
  o.thresholds = {job.local_threshold, job.uniform_threshold};
  o.contextual_cv = job.contextual_cv;
  o.subspace_k = job.report.screenot_k;
  o.subspace_strategy = metrics::parseScreeNotStrategy(job.report.screenot_strategy);
  o.qk_maps = heads::parseHeadList(job.qk_heads);
  if (job.kernel_skip < 0) throw InputError("--kernel-skip", "must not be negative");
  if (job.caps.attention_samples < 1) throw InputError("--head-samples", "must be at least 1");
  return o;
}

anova::AnalysisState analyzeActivations(const AnalyzeJob& job) {
  const auto file = io::SafetensorsFile::open(job.activations);
  std::vector<std::pair<int64_t, at::Tensor>> per_layer;  // [N, T, d] each
  if (const auto* all = file.find("hidden")) {
    if (all->shape.size() != 4) throw InputError(job.activations.string(), "'hidden' must be [L, N, T, d]");
    const auto t = model::tensorFromView(*all);
    for (int64_t l = 0; l < all->shape[0]; ++l) per_layer.emplace_back(l, t[l]);
  } else {
    for (int64_t l = 0;; ++l) {
      const auto* v = file.find("hidden." + std::to_string(l));
      if (!v) break;
      if (v->shape.size() != 3) throw InputError(job.activations.string(), "'hidden." + std::to_string(l) + "' must be [N, T, d]");
      per_layer.emplace_back(l, model::tensorFromView(*v));
    }
  }
  if (per_layer.empty()) throw InputError(job.activations.string(), "holds neither 'hidden' nor 'hidden.0'");
  const auto& first = per_layer.front().second;
  for (const auto& [l, t] : per_layer)
    if (t.sizes() != first.sizes()) throw InputError(job.activations.string(), "layers differ in shape");
  const int64_t n = first.size(0), seq_len = first.size(1), dim = first.size(2);
  if (job.skip_first >= seq_len) throw InputError("--skip-first", "leaves no positions of the " + std::to_string(seq_len));
  checkScreeNotFits(job.report, seq_len - job.skip_first, dim);
  anova::Accumulator acc(accumulatorOptions(job, static_cast<int64_t>(per_layer.size())), seq_len, dim, at::kCPU);
  const int64_t batch_size = job.batch_size > 0 ? job.batch_size : preferredBatch("cpu", seq_len);
  for (int64_t start = 0; start < n; start += batch_size) {
    const int64_t b = std::min(batch_size, n - start);
    std::vector<int64_t> windows(static_cast<size_t>(b));
    for (int64_t i = 0; i < b; ++i) windows[static_cast<size_t>(i)] = start + i;
    acc.beginBatch(windows, std::vector<std::string>(static_cast<size_t>(b)));
    for (const auto& [l, t] : per_layer) acc.onHidden(l, t.narrow(0, start, b));
    acc.checkFinite();
  }
  anova::AnalysisState state;
  state.settings = {{"tool", "posgeom"},
                    {"source", "activations"},
                    {"activations", job.activations.string()},
                    {"seq_len", seq_len},
                    {"skip_first", job.skip_first},
                    {"dim", dim}};
  state.settings["data"] = {{"windows", n}};
  state.windows = n;
  state.layers = acc.statistics();
  return state;
}

struct ModelAnalysis {
  anova::AnalysisState state;
  std::vector<heads::HeadReport> head_reports;
};

constexpr const char* kStateFile = "state.safetensors";
constexpr double kSaveIntervalS = 600;  // without --save-every

// The first setting in which a saved run differs from this one ("" when none): "data"
// and "timings" say how far a run got, everything else what it computes.
std::string firstDifference(const nlohmann::json& saved, const nlohmann::json& now) {
  for (const auto* side : {&saved, &now})
    for (const auto& [key, value] : side->items()) {
      if (key == "data" || key == "timings") continue;
      const auto a = saved.find(key), b = now.find(key);
      if (a == saved.end() || b == now.end() || *a != *b)
        return key + " (saved " + (a == saved.end() ? std::string("none") : a->dump()) + ", now " +
               (b == now.end() ? std::string("none") : b->dump()) + ")";
    }
  return "";
}

// The batch size of the pass: as asked, or chosen (preferredBatch, less where memory is
// short). Stops before the pass when its estimate exceeds the device's memory (or --max-memory).
int64_t choosePassBatch(const AnalyzeJob& job, const model::ModelConfig& config, const model::Numerics& numerics,
                        const anova::AccumulatorOptions& options, int64_t seq_len) {
  int64_t parameters = 0;
  for (const auto& spec : model::architectureFor(config.model_type, config.source.string()).tensors(config))
    parameters += spec.numel();
  PassShape shape;
  const int64_t requested = job.batch_size > 0 ? job.batch_size : preferredBatch(job.device, seq_len);
  shape.batch = job.num_seqs > 0 ? std::min(requested, job.num_seqs) : requested;
  shape.seq_len = seq_len;
  shape.compute_bytes = numerics.dtype == at::kFloat ? 4 : 2;
  shape.layers_kept = static_cast<int64_t>(options.layers.size());
  shape.skip_first = options.skip_first;
  shape.second_moment = options.second_moment;
  shape.heads = options.attention_inputs;
  shape.contexts_cap = options.caps.contexts;
  shape.reservoir = options.caps.reservoir;
  shape.attention_samples = options.caps.attention_samples;
  const auto estimate = estimatePassMemory(config, parameters, shape);
  const auto limit = job.max_memory.empty() ? availableMemory(job.device) : parseByteSize(job.max_memory, "--max-memory");
  if (!limit) {
    spdlog::info("memory: about {} needed ({} cannot tell what it has)", estimate.describe(), job.device);
    return shape.batch;
  }
  spdlog::info("memory: about {} needed of {} available (batch {})", estimate.describe(), formatBytes(*limit),
               shape.batch);
  if (estimate.total() <= *limit) return shape.batch;
  const int64_t fits = largestBatchWithin(config, parameters, shape, *limit);
  if (job.batch_size == 0 && fits > 0) {
    spdlog::info("memory: batch {} fits", fits);
    return fits;
  }
  throw InputError("memory", "the pass needs about " + estimate.describe() + " but " + formatBytes(*limit) +
                                 (job.max_memory.empty() ? " is available on " + job.device : " is allowed (--max-memory)") +
                                 (fits > 0 ? "; --batch-size " + std::to_string(fits) + " fits"
                                           : "; not even one window fits: shorten --seq-len, select fewer --layer, or "
                                             "use --no-second-moment or --dtype bfloat16"));
}

ModelAnalysis analyzeModel(const AnalyzeJob& job) {
  // A missing corpus is found before the model takes its time to load.
  if (job.corpus.path.empty()) throw InputError("--corpus", "is needed with --model (a path, '-', or 'random')");
  if (job.corpus.path != "random") corpus::corpusFiles(job.corpus.path);
  std::optional<anova::AnalysisState> saved;
  const auto state_path = job.out / kStateFile;
  if (!job.resume.empty()) {
    if (!fs::exists(state_path)) throw InputError(job.resume.string(), "holds no " + std::string(kStateFile) + " to resume from");
    saved = anova::loadState(state_path);
  }
  auto t0 = Clock::now();
  const auto numerics = model::Numerics::parse(job.dtype, job.device);
  const auto model_dir = io::resolveModelDir(job.model, io::processEnv());
  const auto model_config = model::loadModelConfig(model_dir);

  const int64_t limit = model_config.max_positions > 0 ? model_config.max_positions : 512;
  const int64_t seq_len = job.seq_len > 0 ? job.seq_len : std::min<int64_t>(512, limit);
  if (model_config.max_positions > 0 && seq_len > model_config.max_positions) {
    // Learned positions end at the table; relative schemes extrapolate, perhaps badly.
    if (model_config.positions == model::PositionScheme::kLearned)
      throw InputError("--seq-len", std::to_string(seq_len) + " exceeds the model's " + std::to_string(model_config.max_positions) +
                                        " learned positions");
    spdlog::warn("--seq-len {} is beyond the {} positions the model was trained on ({} positions extrapolate)", seq_len,
                 model_config.max_positions, model::positionSchemeName(model_config.positions));
  }
  if (job.skip_first >= seq_len) throw InputError("--skip-first", "leaves no positions of the " + std::to_string(seq_len));
  if (job.corpus.path == "random" && job.num_seqs <= 0) throw InputError("--corpus random", "needs --num-seqs");
  if (job.batch_size < 0) throw InputError("--batch-size", "must not be negative");
  if (job.save_every < 0 || job.stop_after < 0) throw InputError("--save-every/--stop-after", "must not be negative");
  if (job.sampling != "sequential" && job.sampling != "random")
    throw InputError("--sampling", "'" + job.sampling + "' (use sequential or random)");
  checkScreeNotFits(job.report, seq_len - job.skip_first, model_config.hidden_size);

  const auto options = accumulatorOptions(job, model_config.num_layers + 1);
  const int64_t batch_size = choosePassBatch(job, model_config, numerics, options, seq_len);

  const auto loaded = model::loadModel(model_dir, numerics);
  const auto& config = loaded.model->config();
  std::unique_ptr<tokenize::Tokenizer> tokenizer;
  const bool text = job.corpus.path != "random" && !corpus::isPretokenized(job.corpus.path);
  if (text) tokenizer = tokenize::loadTokenizer(job.tokenizer.empty() ? model_dir : job.tokenizer);
  if (tokenizer && tokenizer->vocabSize() > config.vocab_size)
    throw InputError((job.tokenizer.empty() ? model_dir : job.tokenizer).string(),
                     "the tokenizer's " + std::to_string(tokenizer->vocabSize()) + " ids do not fit the model's embedding of " +
                         std::to_string(config.vocab_size));
  const double load_s = secondsSince(t0);

  auto stream = corpus::openCorpus(job.corpus, tokenizer.get(), config.vocab_size);
  corpus::WindowOptions w;
  w.seq_len = seq_len;
  w.max_windows = job.num_seqs;
  w.random_offsets = job.sampling == "random";
  w.seed = job.seed;
  w.cross_documents = job.cross_documents;
  w.max_per_document = job.windows_per_document;
  if (tokenizer && job.special_tokens) w.framing = tokenizer->framing();
  std::tie(w.shard_index, w.shard_count) = parseShard(job.shard);
  corpus::WindowSampler sampler(*stream, w);

  anova::AnalysisState state;
  state.settings = {{"tool", "posgeom"},
                    {"source", "model"},
                    {"model", model_dir.string()},
                    {"model_type", config.model_type},
                    {"corpus", job.corpus.path},
                    {"tokenizer", tokenizer ? tokenizer->describe() : std::string("none (ids)")},
                    {"seq_len", seq_len},
                    {"skip_first", job.skip_first},
                    {"num_seqs", job.num_seqs},
                    {"batch_size", job.batch_size},
                    {"device", job.device},
                    {"dtype", job.dtype},
                    {"sampling", job.sampling},
                    {"seed", job.seed},
                    {"cross_documents", job.cross_documents},
                    {"windows_per_document", job.windows_per_document},
                    {"special_tokens", job.special_tokens && tokenizer != nullptr},
                    {"causal", job.causal || !config.bidirectional},
                    {"layer_selection", options.layers},
                    {"second_moment", job.second_moment},
                    {"context_cap", job.caps.contexts},
                    {"dim", config.hidden_size}};
  state.settings["shard"] = job.shard.empty() ? "0/1" : job.shard;
  std::optional<heads::HeadOptions> head_options;
  if (job.heads) {
    head_options = headOptions(job);
    state.settings["head_options"] = headSettingsJson(*head_options, job.caps.attention_samples);
  }

  anova::Accumulator acc(options, seq_len, config.hidden_size, numerics.device);
  TokenHash hash;
  int64_t windows = 0;
  double forward_s = 0;
  if (saved) {
    if (const auto difference = firstDifference(saved->settings, state.settings); !difference.empty())
      throw InputError(state_path.string(), "was saved by a run with other settings: " + difference);
    // The windows are a function of the corpus and the settings: read past the saved ones
    // again (no forward pass) and check that they are the same tokens.
    for (; windows < saved->windows; ++windows) {
      auto window = sampler.next();
      if (!window) throw InputError(job.corpus.path, "has fewer windows than the saved run read");
      hash.add(window->ids);
    }
    if (hash.hex() != saved->settings["data"].value("token_hash", std::string()))
      throw InputError(job.corpus.path, "is not the corpus the saved run read (its tokens differ)");
    acc.restore(saved->layers, state_path.string());
    forward_s = saved->settings["timings"].value("forward_and_accumulate_s", 0.0);
    spdlog::info("resuming after {} windows from {}", windows, state_path.string());
  }

  // The state as it stands: saved every --save-every windows, on a stop, and at the end.
  // What the sampler and the stream had read when the last batch of the pass was cut (the
  // reader runs one batch ahead of the pass).
  corpus::WindowStats read_stats = sampler.stats();
  corpus::TokenStreamStats stream_stats = stream->stats();
  auto snapshot = [&](bool complete, double seconds) {
    const auto& ws = read_stats;
    const auto& ss = stream_stats;
    state.settings["data"] = {{"windows", windows},
                              {"tokens_read", ws.tokens_read},
                              {"documents", ws.documents_seen},
                              {"token_hash", hash.hex()},
                              {"invalid_utf8_replaced", ss.invalid_utf8_replaced},
                              {"skipped_rows", ss.skipped_rows},
                              {"complete", complete}};
    state.settings["timings"] = {{"load_s", load_s}, {"forward_and_accumulate_s", seconds}};
    state.windows = windows;
    state.layers = complete ? acc.takeStatistics() : acc.statistics();
    anova::saveState(state, state_path);
  };

  model::ForwardRequest request;
  if (job.causal) request.causal = true;
  request.last_layer = *options.layers.rbegin();
  request.observer = &acc;
  t0 = Clock::now();
  auto last_save = t0;
  int64_t saved_at = windows;
  const StopSignals signals;
  ProgressLine progress("analyze", job.num_seqs > 0 ? job.num_seqs / w.shard_count : 0, "windows");
  WindowBatches batches(sampler, *stream, batch_size);  // the next batch is read during this one's pass
  for (bool more = true; more;) {
    auto batch = batches.next();
    read_stats = batch.windows_read;
    stream_stats = batch.stream;
    more = !batches.exhausted();
    if (batch.size() == 0) break;
    hash.add(batch.ids);
    const int64_t b = batch.size();
    request.ids = at::from_blob(batch.ids.data(), {b, seq_len}, at::TensorOptions().dtype(at::kInt)).to(at::kLong);
    acc.beginBatch(std::move(batch.indices), std::move(batch.labels));
    loaded.model->forward(request);
    acc.checkFinite();
    windows += b;
    progress.update(windows, windows * seq_len);
    const bool stop = signals.received() != 0 || (job.stop_after > 0 && windows >= job.stop_after);
    if (!more && !stop) break;
    if (stop || (job.save_every > 0 ? windows - saved_at >= job.save_every : secondsSince(last_save) >= kSaveIntervalS)) {
      snapshot(false, forward_s + secondsSince(t0));
      saved_at = windows;
      last_save = Clock::now();
    }
    if (stop) {
      progress.finish();
      const int signal = signals.received();
      throw RunStopped((signal ? std::string(signal == SIGINT ? "SIGINT" : "SIGTERM") + " after "
                               : "--stop-after: after ") +
                           std::to_string(windows) + " windows; the state is in " + state_path.string() +
                           "; the same command with --resume " + job.out.string() + " continues it",
                       signal ? 128 + signal : 0);
    }
  }
  progress.finish();
  forward_s += secondsSince(t0);
  const auto& ws = read_stats;
  const auto& ss = stream_stats;
  spdlog::info("{} windows of {} tokens ({} tokens read, {} documents) in {:.1f} s", windows, seq_len, ws.tokens_read,
               ws.documents_seen, forward_s);
  if (ss.invalid_utf8_replaced) spdlog::warn("{} invalid UTF-8 sequences were replaced", ss.invalid_utf8_replaced);
  if (ss.skipped_rows) spdlog::warn("{} malformed JSON Lines rows were skipped", ss.skipped_rows);
  if (windows == 0) throw InputError(job.corpus.path, "this shard received no window");
  // Saved before the heads and the report: a stop during those resumes with no pass at all.
  snapshot(true, forward_s);

  ModelAnalysis result{std::move(state), {}};
  if (head_options)
    result.head_reports = analyzeHeads(*loaded.model, result.state, *head_options, job.causal || !config.bidirectional);
  return result;
}

}  // namespace

anova::AccumulatorOptions accumulatorOptions(const AnalyzeJob& job, int64_t hidden_states) {
  anova::AccumulatorOptions options;
  options.layers = parseLayers(job.layers, hidden_states);
  options.skip_first = job.skip_first;
  options.second_moment = job.second_moment;
  options.attention_inputs = job.heads;
  options.caps = job.caps;
  return options;
}

std::filesystem::path defaultModelDir() {
  if (const char* env = std::getenv("POSGEOM_DEFAULT_MODEL"); env && *env) return env;
  return POSGEOM_DEFAULT_MODEL_DIR;
}

void runAnalyzeJob(const AnalyzeJob& requested) {
  AnalyzeJob job = requested;
  const bool from_activations = !job.activations.empty();
  if (!from_activations && job.model.empty()) {
    job.model = defaultModelDir().string();
    if (!fs::exists(job.model + "/config.json"))
      throw InputError(job.model, "the bundled default model is missing; give --model (or set POSGEOM_DEFAULT_MODEL)");
    spdlog::info("no --model: using the bundled default model {}", job.model);
  }
  if (!from_activations && job.corpus.path.empty()) {
    job.corpus.path = kDefaultCorpus;
    spdlog::info("no --corpus: using {}", kDefaultCorpus);
  }
  metricOptions(job.report);  // validate before the long part
  if (job.heads) headOptions(job);
  if (from_activations && job.heads) throw InputError("--heads", "needs the model (--model), not --activations");
  if (!job.resume.empty()) {
    if (from_activations) throw InputError("--resume", "continues a pass through a model, not --activations");
    job.out = job.resume;
  }
  const OutputDirectory output(job.out, job.force || !job.resume.empty());
  ModelAnalysis analysis = from_activations ? ModelAnalysis{analyzeActivations(job), {}} : analyzeModel(job);
  if (from_activations) anova::saveState(analysis.state, job.out / kStateFile);
  writeReport(analysis.state, job.report, job.out, analysis.head_reports);
  spdlog::info("report in {}", job.out.string());
}

void runSinusoidalBaseline(int64_t dim, int64_t seq_len, const fs::path& out, const ReportOptions& report, bool force) {
  if (dim <= 0 || dim % 2 || seq_len < 2) throw InputError("baseline", "needs an even --dim > 0 and --seq-len >= 2");
  Eigen::MatrixXd pe(seq_len, dim);
  for (int64_t t = 0; t < seq_len; ++t)
    for (int64_t i = 0; i < dim / 2; ++i) {
      const double angle = static_cast<double>(t) / std::pow(10000.0, 2.0 * static_cast<double>(i) / static_cast<double>(dim));
      pe(t, 2 * i) = std::sin(angle);
      pe(t, 2 * i + 1) = std::cos(angle);
    }
  // One "sequence" that is the embedding itself: its positional basis is PE minus its mean.
  anova::LayerStatistics s;
  s.sequences = 1;
  s.position_sum = pe;
  s.second_moment = pe.transpose() * pe;
  s.context_means = pe.colwise().mean();
  s.context_second_moment = s.context_means.transpose() * s.context_means;
  s.context_windows = {0};
  s.context_labels = {""};
  s.norm_sum = pe.rowwise().norm().sum();
  anova::AnalysisState state;
  state.settings = {{"tool", "posgeom"}, {"source", "sinusoidal baseline"}, {"dim", dim}, {"seq_len", seq_len}, {"skip_first", 0}};
  state.windows = 1;
  state.layers.push_back(std::move(s));
  const OutputDirectory output(out, force);
  writeReport(state, report, out);
  spdlog::info("sinusoidal baseline (d={}, T={}) in {}", dim, seq_len, out.string());
}

void runMergeJob(const MergeJob& job) {
  std::vector<anova::AnalysisState> loaded;
  for (const auto& p : job.states) loaded.push_back(anova::loadState(p));
  auto caps = job.caps;
  if (!loaded.empty() && loaded.front().settings.contains("head_options"))
    caps.attention_samples = loaded.front().settings["head_options"].value("samples", caps.attention_samples);
  const auto merged = anova::mergeStates(loaded, caps);
  std::vector<heads::HeadReport> head_reports;
  if (merged.settings.contains("head_options")) {
    if (job.model.empty()) {
      spdlog::warn("the states hold attention inputs: give --model to analyse the heads");
    } else {
      const auto loaded_model = model::loadModel(io::resolveModelDir(job.model, io::processEnv()), model::Numerics::parse("float32", "cpu"));
      if (loaded_model.model->config().model_type != merged.settings.value("model_type", ""))
        throw InputError(job.model, "is a " + loaded_model.model->config().model_type + " model; the states come from " +
                                        merged.settings.value("model_type", std::string("another")));
      heads::HeadOptions defaults;
      defaults.subspace_k = job.report.screenot_k;
      defaults.subspace_strategy = metrics::parseScreeNotStrategy(job.report.screenot_strategy);
      head_reports = analyzeHeads(*loaded_model.model, merged, headOptionsFromSettings(merged.settings["head_options"], defaults),
                                  merged.settings.value("causal", true));
    }
  }
  const OutputDirectory output(job.out, job.force);
  anova::saveState(merged, job.out / "state.safetensors");
  writeReport(merged, job.report, job.out, head_reports);
  spdlog::info("merged {} states ({} windows) into {}", job.states.size(), merged.windows, job.out.string());
}

}  // namespace posgeom::pipeline
