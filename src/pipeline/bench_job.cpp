#include "posgeom/pipeline/bench_job.h"

#include <ATen/Parallel.h>
#include <spdlog/spdlog.h>
#include <stdlib.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <tuple>
#include <utility>

#include "pass_options.h"
#include "posgeom/base/error.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/corpus/window_sampler.h"
#include "posgeom/io/atomic_file.h"
#include "posgeom/metrics/layer_metrics.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/device_timing.h"
#include "posgeom/model/flops.h"
#include "posgeom/model/loader.h"
#include "posgeom/model/runtime.h"
#include "posgeom/pipeline/analyze_job.h"
#include "posgeom/pipeline/bench_rounds.h"
#include "posgeom/pipeline/heads_stage.h"
#include "posgeom/pipeline/memory_estimate.h"

namespace posgeom::pipeline {
namespace fs = std::filesystem;
namespace {

using Clock = std::chrono::steady_clock;
double secondsSince(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Times an accumulator's calls. On the CPU a call returns when its work is done; on a GPU
// once its work is queued, so there the time would mean nothing.
class TimedObserver final : public model::LayerObserver {
 public:
  explicit TimedObserver(model::LayerObserver& inner) : inner_(inner) {}
  void onHidden(int64_t layer, const at::Tensor& hidden) override {
    const auto start = Clock::now();
    inner_.onHidden(layer, hidden);
    seconds += secondsSince(start);
  }
  void onAttentionInput(int64_t block, const at::Tensor& normed) override {
    const auto start = Clock::now();
    inner_.onAttentionInput(block, normed);
    seconds += secondsSince(start);
  }
  double seconds = 0;

 private:
  model::LayerObserver& inner_;
};

model::RandomCheckpointSpec shapeSpec(const std::string& type, int64_t layers, int64_t dim, int64_t heads,
                                      int64_t kv_heads, int64_t ff, int64_t vocab, int64_t positions) {
  model::RandomCheckpointSpec s;
  s.model_type = type;
  s.layers = layers;
  s.hidden_size = dim;
  s.heads = heads;
  s.kv_heads = kv_heads;
  s.intermediate_size = ff;
  s.vocab_size = vocab;
  s.max_positions = positions;
  return s;
}

const BenchShape& shapeNamed(const std::string& name) {
  for (const auto& s : benchShapes())
    if (s.name == name) return s;
  std::string known;
  for (const auto& s : benchShapes()) known += (known.empty() ? "" : ", ") + s.name;
  throw InputError("--shape", "'" + name + "' is not a benchmark shape (" + known + ")");
}

// Removes a temporary directory of generated checkpoints when the benchmark ends.
class WorkDirectory {
 public:
  explicit WorkDirectory(const fs::path& requested) {
    if (!requested.empty()) {
      path_ = requested;
      std::error_code ec;
      fs::create_directories(path_, ec);
      if (ec) throw InputError(path_.string(), "cannot create the work directory: " + ec.message());
      return;
    }
    std::string pattern = (fs::temp_directory_path() / "posgeom-bench-XXXXXX").string();
    if (!mkdtemp(pattern.data())) throw InputError(pattern, "cannot create a temporary directory");
    path_ = pattern;
    temporary_ = true;
  }
  ~WorkDirectory() {
    std::error_code ec;
    if (temporary_) fs::remove_all(path_, ec);
  }
  WorkDirectory(const WorkDirectory&) = delete;
  WorkDirectory& operator=(const WorkDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  bool temporary_ = false;
};

bool sameShape(const model::ModelConfig& c, const model::RandomCheckpointSpec& s) {
  return c.model_type == s.model_type && c.num_layers == s.layers && c.hidden_size == s.hidden_size &&
         c.num_heads == s.heads && c.num_kv_heads == (s.kv_heads > 0 ? s.kv_heads : s.heads) &&
         c.intermediate_size == s.intermediate_size && c.vocab_size == s.vocab_size && c.max_positions == s.max_positions;
}

// A generated checkpoint is reused when the work directory already holds one of the shape.
fs::path checkpointFor(const BenchShape& shape, const fs::path& work_dir) {
  const auto dir = work_dir / shape.name;
  std::error_code ec;
  if (fs::exists(dir / "model.safetensors", ec)) {
    try {
      if (sameShape(model::loadModelConfig(dir), shape.spec)) return dir;
    } catch (const InputError&) {
    }
  }
  spdlog::info("writing a random {} checkpoint to {}", shape.name, dir.string());
  model::writeRandomCheckpoint(shape.spec, dir);
  return dir;
}

std::string readCpuName() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  return "unknown";
}

// Corpus reading, tokenization and windowing exactly as analyze does them, without a model.
// The model's own tokenizer, or the bundled default model's for checkpoints without one.
double measureTokenizer(const fs::path& model_dir, int64_t seq_len, std::string& source) {
  std::unique_ptr<tokenize::Tokenizer> tokenizer;
  try {
    tokenizer = tokenize::loadTokenizer(model_dir.empty() ? defaultModelDir() : model_dir);
  } catch (const InputError&) {
    tokenizer = tokenize::loadTokenizer(defaultModelDir());
  }
  corpus::CorpusOptions corpus;
  corpus.path = kDefaultCorpus;
  source = tokenizer->describe() + " on " + corpus.path;
  const auto start = Clock::now();
  auto stream = corpus::openCorpus(corpus, tokenizer.get(), tokenizer->vocabSize());
  corpus::WindowOptions w;
  w.seq_len = seq_len;
  w.framing = tokenizer->framing();
  corpus::WindowSampler sampler(*stream, w);
  while (sampler.next()) {
  }
  const double seconds = secondsSince(start);
  return seconds > 0 ? static_cast<double>(sampler.stats().tokens_read) / seconds : 0;
}

// As analyze chooses it.
int64_t chooseBatch(const BenchJob& job, const model::ModelConfig& config, int64_t parameters,
                    const model::Numerics& numerics, const anova::AccumulatorOptions& options) {
  if (job.batch_size > 0) return job.batch_size;
  PassShape shape;
  shape.batch = preferredBatch(job.device, job.seq_len);
  shape.seq_len = job.seq_len;
  shape.compute_bytes = numerics.dtype == at::kFloat ? 4 : 2;
  shape.layers_kept = static_cast<int64_t>(options.layers.size());
  shape.heads = true;
  if (const auto limit = availableMemory(job.device)) {
    const int64_t fits = largestBatchWithin(config, parameters, shape, *limit);
    if (fits < 1) throw InputError("memory", "not even one window of " + std::to_string(job.seq_len) + " tokens fits");
    return fits;
  }
  return shape.batch;
}

BenchModelResult measureModel(const BenchJob& job, const std::string& name, const fs::path& dir,
                              const model::Numerics& numerics, double gemm_gflops) {
  releaseFreeMemory();
  resetPeakResident();
  const auto loaded = model::loadModel(dir, numerics);
  const int64_t load_peak = peakResidentBytes();
  const auto& model = *loaded.model;
  const auto& config = model.config();
  const auto specs = model::architectureFor(config.model_type, dir.string()).tensors(config);
  int64_t parameters = 0;
  for (const auto& s : specs) parameters += s.numel();
  if (config.max_positions > 0 && job.seq_len > config.max_positions &&
      config.positions == model::PositionScheme::kLearned)
    throw InputError("--seq-len", std::to_string(job.seq_len) + " exceeds " + name + "'s " +
                                      std::to_string(config.max_positions) + " learned positions");

  AnalyzeJob analyze;  // analyze's defaults: every layer, the second moment, the default caps
  auto options = accumulatorOptions(analyze, config.num_layers + 1);
  auto head_options = options;
  head_options.attention_inputs = true;
  BenchModelResult r;
  r.name = name;
  r.model_type = config.model_type;
  r.layers = config.num_layers;
  r.hidden_size = config.hidden_size;
  r.heads = config.num_heads;
  r.kv_heads = config.num_kv_heads;
  r.intermediate_size = config.intermediate_size;
  r.vocab_size = config.vocab_size;
  r.seq_len = job.seq_len;
  r.batch = chooseBatch(job, config, parameters, numerics, head_options);
  std::error_code ec;
  r.checkpoint_bytes = static_cast<int64_t>(fs::file_size(dir / "model.safetensors", ec));
  const bool causal = !config.bidirectional;
  r.flops_per_token = model::forwardFlopsPerToken(config, specs, job.seq_len, causal);

  auto accumulator = std::make_unique<anova::Accumulator>(options, job.seq_len, config.hidden_size, numerics.device);
  auto head_accumulator =
      std::make_unique<anova::Accumulator>(head_options, job.seq_len, config.hidden_size, numerics.device);
  const auto ids = at::randint(config.vocab_size, {r.batch, job.seq_len}, at::TensorOptions().dtype(at::kLong));
  const std::vector<std::string> labels(static_cast<size_t>(r.batch));
  int64_t next_window = 0;
  int64_t device_peak = 0;
  const bool time_accumulators = numerics.device.is_cpu();
  // (seconds, of which inside the accumulators: 0 unless timed)
  auto pass = [&](anova::Accumulator* acc) -> std::pair<double, double> {
    std::optional<TimedObserver> timed;
    model::ForwardRequest request;
    request.ids = ids;
    request.observer = acc;
    if (acc && time_accumulators) request.observer = &timed.emplace(*acc);
    const auto start = Clock::now();
    if (acc) {
      std::vector<int64_t> windows(static_cast<size_t>(r.batch));
      for (auto& w : windows) w = next_window++;
      acc->beginBatch(windows, labels);
    }
    model.forward(request);
    if (acc) acc->checkFinite();  // one synchronisation, as in analyze
    model::synchronize(numerics);
    const double seconds = secondsSince(start);
    if (const auto memory = model::cudaMemory()) device_peak = std::max(device_peak, memory->total - memory->free);
    return {seconds, timed ? timed->seconds : 0.0};
  };
  pass(nullptr);  // warm-up: kernels chosen, buffers in place
  pass(accumulator.get());
  pass(head_accumulator.get());
  auto& rounds = r.rounds;
  rounds.resize(static_cast<size_t>(job.rounds));
  for (int i = 0; i < job.rounds; ++i) {
    auto& round = rounds[static_cast<size_t>(i)];
    for (const auto which : passOrder(i)) {
      if (which == BenchPass::kForward) round.forward = pass(nullptr).first;
      if (which == BenchPass::kAnalyze) std::tie(round.analyze, round.analyze_accumulating) = pass(accumulator.get());
      if (which == BenchPass::kAnalyzeHeads)
        std::tie(round.analyze_heads, round.analyze_heads_accumulating) = pass(head_accumulator.get());
    }
    spdlog::info("{}: round {}/{}", name, i + 1, job.rounds);
  }
  const auto rates = ratesFromRounds(rounds, static_cast<double>(r.batch * job.seq_len));
  r.forward_tokens_per_s = rates.forward_tokens_per_s;
  r.analyze_tokens_per_s = rates.analyze_tokens_per_s;
  r.analyze_heads_tokens_per_s = rates.analyze_heads_tokens_per_s;
  if (time_accumulators) {
    r.analyze_accumulator_share = rates.analyze_accumulator_share;
    r.analyze_heads_accumulator_share = rates.analyze_heads_accumulator_share;
  }
  r.forward_gemm_share = r.forward_tokens_per_s * r.flops_per_token / (gemm_gflops * 1e9);

  // Memory and the fixed costs as one analyze --heads run has them: the timing above held
  // two accumulators, a run holds one. The end stages run on its statistics.
  accumulator.reset();
  head_accumulator.reset();
  releaseFreeMemory();
  resetPeakResident();
  anova::Accumulator run_accumulator(head_options, job.seq_len, config.hidden_size, numerics.device);
  pass(&run_accumulator);
  anova::AnalysisState state;
  state.layers = run_accumulator.takeStatistics();
  // analyze's defaults, with ScreeNOT's bound lowered where a short --seq-len needs it
  // (imputation needs 2k + 1 below the basis' smaller side).
  const int64_t smaller_side = std::min(job.seq_len - analyze.skip_first, config.hidden_size);
  const int rank_bound = static_cast<int>(std::min<int64_t>(20, (smaller_side - 2) / 2));
  auto start = Clock::now();
  metrics::LayerMetricsOptions metric_options;
  metric_options.screenot_k = rank_bound;
  for (const auto& s : state.layers) metrics::computeLayerMetrics(s, metric_options);
  r.metrics_end_stage_s = secondsSince(start);
  start = Clock::now();
  heads::HeadOptions head_analysis;
  head_analysis.subspace_k = rank_bound;
  analyzeHeads(model, state, head_analysis, causal);
  r.heads_end_stage_s = secondsSince(start);
  r.peak_rss_bytes = std::max(load_peak, peakResidentBytes());
  if (numerics.device.is_cuda()) r.device_memory_bytes = device_peak;
  return r;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%.*f", decimals, v);
  return buf;
}

nlohmann::json optionalJson(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

// "12.1% over forward; the accumulators' own time 6.9% of the pass"
std::string overheadText(double forward_tokens_per_s, double tokens_per_s, const std::optional<double>& share) {
  std::string text = fixed(100.0 * (forward_tokens_per_s / tokens_per_s - 1.0), 1) + "% over forward";
  if (share) text += "; the accumulators' own time " + fixed(100.0 * *share, 1) + "% of the pass";
  return text;
}

}  // namespace

const std::vector<BenchShape>& benchShapes() {
  static const std::vector<BenchShape> shapes = {
      {"gpt2-small", shapeSpec("gpt2", 12, 768, 12, 12, 3072, 50257, 1024)},
      {"llama-small", shapeSpec("llama", 12, 768, 12, 4, 2048, 32000, 2048)},
      {"llama-1b", shapeSpec("llama", 22, 2048, 32, 4, 5632, 32000, 2048)},
  };
  return shapes;
}

BenchResult runBench(const BenchJob& job) {
  if (job.seq_len < 8) throw InputError("--seq-len", "must be at least 8");
  if (job.rounds < 1) throw InputError("--rounds", "must be at least 1");
  if (job.batch_size < 0) throw InputError("--batch-size", "must not be negative");
  const auto numerics = model::Numerics::parse(job.dtype, job.device);
  std::vector<std::pair<std::string, fs::path>> models;
  for (const auto& m : job.models) {
    if (!fs::exists(m / "config.json")) throw InputError(m.string(), "holds no config.json");
    models.emplace_back(m.filename().empty() ? m.parent_path().filename().string() : m.filename().string(), m);
  }
  std::vector<std::string> shape_names = job.shapes;
  if (shape_names.empty() && models.empty())
    shape_names = {"gpt2-small", numerics.device.is_cuda() ? "llama-1b" : "llama-small"};
  for (const auto& name : shape_names) shapeNamed(name);  // every name checked before any work

  BenchResult result;
  result.device = numerics.device.str();
  result.dtype = job.dtype;
  result.threads = at::get_num_threads();
  result.blas = model::detectBlas().path;
  result.cpu = readCpuName();
  result.gemm_size = numerics.device.is_cuda() ? 8192 : 2048;
  spdlog::info("measuring {}^3 matrix products in {}", result.gemm_size, numerics.describe());
  result.gemm_gflops = model::measureMatmulGflops(numerics, result.gemm_size, numerics.device.is_cuda() ? 20 : 4, 3);
  result.tokenizer_tokens_per_s =
      measureTokenizer(job.models.empty() ? fs::path() : job.models.front(), job.seq_len, result.tokenizer_source);

  const WorkDirectory work(job.work_dir);
  for (const auto& name : shape_names) models.emplace_back(name, checkpointFor(shapeNamed(name), work.path()));
  for (const auto& [name, dir] : models) {
    spdlog::info("measuring {}", name);
    result.models.push_back(measureModel(job, name, dir, numerics, result.gemm_gflops));
  }
  if (!job.out.empty()) io::writeTextFileAtomically(job.out, benchJson(result).dump(2) + "\n");
  return result;
}

nlohmann::json benchJson(const BenchResult& r) {
  nlohmann::json models = nlohmann::json::array();
  for (const auto& m : r.models) {
    nlohmann::json j = {{"name", m.name},
                        {"model_type", m.model_type},
                        {"layers", m.layers},
                        {"hidden_size", m.hidden_size},
                        {"heads", m.heads},
                        {"kv_heads", m.kv_heads},
                        {"intermediate_size", m.intermediate_size},
                        {"vocab_size", m.vocab_size},
                        {"seq_len", m.seq_len},
                        {"batch", m.batch},
                        {"checkpoint_bytes", m.checkpoint_bytes},
                        {"flops_per_token", m.flops_per_token},
                        {"forward_tokens_per_s", m.forward_tokens_per_s},
                        {"analyze_tokens_per_s", m.analyze_tokens_per_s},
                        {"analyze_heads_tokens_per_s", m.analyze_heads_tokens_per_s},
                        {"forward_gemm_share", m.forward_gemm_share},
                        {"analyze_overhead", m.forward_tokens_per_s / m.analyze_tokens_per_s - 1.0},
                        {"analyze_heads_overhead", m.forward_tokens_per_s / m.analyze_heads_tokens_per_s - 1.0},
                        {"analyze_accumulator_share", optionalJson(m.analyze_accumulator_share)},
                        {"analyze_heads_accumulator_share", optionalJson(m.analyze_heads_accumulator_share)},
                        {"metrics_end_stage_s", m.metrics_end_stage_s},
                        {"heads_end_stage_s", m.heads_end_stage_s},
                        {"peak_rss_bytes", m.peak_rss_bytes}};
    if (m.device_memory_bytes) j["device_memory_bytes"] = *m.device_memory_bytes;
    auto& rounds = j["rounds_s"] = nlohmann::json::array();
    for (const auto& round : m.rounds)
      rounds.push_back({{"forward", round.forward},
                        {"analyze", round.analyze},
                        {"analyze_heads", round.analyze_heads},
                        {"analyze_accumulating", round.analyze_accumulating},
                        {"analyze_heads_accumulating", round.analyze_heads_accumulating}});
    models.push_back(std::move(j));
  }
  nlohmann::json out = {{"tool", "posgeom bench"},
                        {"version", POSGEOM_VERSION},
                        {"device", r.device},
                        {"dtype", r.dtype},
                        {"threads", r.threads},
                        {"blas", r.blas},
                        {"cpu", r.cpu},
                        {"gemm_size", r.gemm_size},
                        {"gemm_gflops", r.gemm_gflops},
                        {"tokenizer", r.tokenizer_source},
                        {"tokenizer_tokens_per_s", r.tokenizer_tokens_per_s},
                        {"models", models}};
  if (!r.models.empty()) {
    const auto& first = models.front();
    for (const char* key : {"forward_tokens_per_s", "analyze_tokens_per_s", "analyze_heads_tokens_per_s",
                            "forward_gemm_share", "flops_per_token", "peak_rss_bytes", "checkpoint_bytes"})
      out[key] = first[key];
    out["model"] = first["name"];
    out["tokenizer_share"] = r.models.front().forward_tokens_per_s / r.tokenizer_tokens_per_s;
  }
  return out;
}

std::string benchTable(const BenchResult& r) {
  std::ostringstream out;
  out << "device " << r.device << ", " << r.dtype << ", " << r.threads << " threads; CPU " << r.cpu << "\n";
  out << "BLAS " << r.blas << "\n";
  out << "matrix multiply (" << r.gemm_size << "^3, " << r.dtype << "): " << fixed(r.gemm_gflops, 1) << " GFLOP/s\n";
  out << "tokenizer (" << r.tokenizer_source << "): " << fixed(r.tokenizer_tokens_per_s, 0) << " tokens/s";
  if (!r.models.empty())
    out << ", " << fixed(100.0 * r.models.front().forward_tokens_per_s / r.tokenizer_tokens_per_s, 4)
        << "% of the " << r.models.front().name << " pass's time";
  out << "\n\n";
  for (const auto& m : r.models) {
    out << m.name << " (" << m.model_type << ", " << m.layers << " x " << m.hidden_size << ", " << m.heads << "/"
        << m.kv_heads << " heads), T=" << m.seq_len << ", batch " << m.batch << ", " << fixed(m.flops_per_token / 1e9, 3)
        << " GFLOP/token\n";
    out << "  forward          " << fixed(m.forward_tokens_per_s, 1) << " tokens/s, "
        << fixed(100.0 * m.forward_gemm_share, 1) << "% of the matrix-multiply throughput\n";
    out << "  analyze          " << fixed(m.analyze_tokens_per_s, 1) << " tokens/s ("
        << overheadText(m.forward_tokens_per_s, m.analyze_tokens_per_s, m.analyze_accumulator_share)
        << "); end stage " << fixed(m.metrics_end_stage_s, 2) << " s per run\n";
    out << "  analyze --heads  " << fixed(m.analyze_heads_tokens_per_s, 1) << " tokens/s ("
        << overheadText(m.forward_tokens_per_s, m.analyze_heads_tokens_per_s, m.analyze_heads_accumulator_share)
        << "); heads end stage " << fixed(m.heads_end_stage_s, 2) << " s per run\n";
    out << "  peak RSS " << formatBytes(m.peak_rss_bytes) << " (checkpoint " << formatBytes(m.checkpoint_bytes) << ", "
        << formatBytes(m.peak_rss_bytes - m.checkpoint_bytes) << " beyond it)";
    if (m.device_memory_bytes) out << "; device memory in use " << formatBytes(*m.device_memory_bytes);
    out << "\n";
  }
  return out.str();
}

}  // namespace posgeom::pipeline
