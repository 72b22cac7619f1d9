#include "posgeom/jobs/bench_job.h"
#include "posgeom/jobs/bench_layer_major.h"

#include <spdlog/spdlog.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <tuple>
#include <utility>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/base/process_memory.h"
#include "posgeom/base/stopwatch.h"
#include "posgeom/corpus/window_sampler.h"
#include "posgeom/hub/model_source.h"
#include "posgeom/io/output_file.h"
#include "posgeom/io/temporary_directory.h"
#include "posgeom/jobs/analyze_job.h"
#include "posgeom/jobs/bench_rounds.h"
#include "posgeom/jobs/default_corpus.h"
#include "posgeom/metrics/moment_solver.h"
#include "posgeom/model/architecture.h"
#include "posgeom/model/flops.h"
#include "posgeom/pass/analysis_pass.h"
#include "posgeom/pass/heads_stage.h"
#include "posgeom/pass/metrics_stage.h"
#include "posgeom/runtime/cpu_features.h"
#include "posgeom/runtime/device_timing.h"
#include "posgeom/runtime/threads.h"
#include "posgeom/tokenize/tokenizer.h"

namespace posgeom::jobs {
namespace fs = std::filesystem;
namespace {

using Clock = SteadyClock;

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
  throw InputError(option::kShape, "'" + name + "' is not a benchmark shape (" + known + ")");
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
    temporary_ = std::make_unique<io::TemporaryDirectory>("bench");
    path_ = temporary_->path();
  }
  WorkDirectory(const WorkDirectory&) = delete;
  WorkDirectory& operator=(const WorkDirectory&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
  std::unique_ptr<io::TemporaryDirectory> temporary_;  // removed with the object
};

bool sameShape(const model::ModelConfig& c, const model::RandomCheckpointSpec& s) {
  return c.model_type == s.model_type && c.num_layers == s.layers && c.hidden_size == s.hidden_size &&
         c.num_heads == s.heads && c.num_kv_heads == (s.kv_heads > 0 ? s.kv_heads : s.heads) &&
         c.intermediate_size == s.intermediate_size && c.vocab_size == s.vocab_size && c.max_positions == s.max_positions;
}

// A generated checkpoint is reused when the work directory already holds one of the shape.
// A bfloat16 run's is stored in bfloat16 (<shape>-bf16/): half the bytes to write and read,
// and the numbers the float32 one gives it rounded the same.
struct ShapeCheckpoint {
  model::RandomCheckpointSpec spec;
  fs::path dir;
  bool reuse = false;
};

// Judged before anything is measured: a directory that holds anything but a random
// checkpoint bench (or random-model) wrote is never replaced.
ShapeCheckpoint checkpointFor(const BenchShape& shape, const fs::path& work_dir, runtime::ComputeDtype dtype) {
  ShapeCheckpoint c{shape.spec, {}, false};
  if (dtype == runtime::ComputeDtype::kBFloat16) c.spec.storage = io::DType::kBF16;
  c.dir = work_dir / (shape.name + (c.spec.storage == io::DType::kBF16 ? "-bf16" : ""));
  std::error_code ec;
  if (fs::exists(c.dir / "model.safetensors", ec)) {
    try {
      c.reuse = sameShape(model::loadModelConfig(c.dir), c.spec);
    } catch (const InputError&) {
    }
  }
  if (c.reuse) return c;
  try {
    model::checkRandomCheckpointOut(c.dir, /*force=*/true);
  } catch (const InputError&) {
    throw InputError(option::kWorkDir, "'" + c.dir.string() + "' holds files bench did not write; it writes the random " +
                                           shape.name + " checkpoint there, so choose another --work-dir");
  }
  return c;
}

fs::path writtenCheckpoint(const std::string& name, const ShapeCheckpoint& c) {
  if (c.reuse) return c.dir;
  spdlog::info("writing a random {} checkpoint to {}", name, c.dir.string());
  model::writeRandomCheckpoint(c.spec, c.dir);
  return c.dir;
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
  corpus.path = defaultCorpus().string();
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

}  // namespace

pass::AnalyzeOptions benchOptions(const BenchJob& job, bool heads) {
  pass::AnalyzeOptions o;  // analyze's defaults: every layer, the second moment, the default caps
  o.seq_len = job.seq_len;
  o.batch_size = job.batch_size;
  o.device = job.device;
  o.dtype = job.dtype;
  o.heads = heads;
  // ScreeNOT's bound is analyze's default, which the plan cuts to fit a short --seq-len or
  // a narrow model; it also bounds the heads' positional subspace.
  return o;
}

std::pair<pass::PassPlan, pass::PassPlan> benchPlans(const BenchJob& job, const fs::path& model_dir) {
  const auto config = model::loadModelConfig(model_dir);
  auto options = benchOptions(job, false);
  auto heads = options;
  heads.heads = true;
  return {pass::planPass(options, model_dir, config), pass::planPass(heads, model_dir, config)};
}

namespace {

// One LAPACK eigendecomposition (all eigenvalues) of a symmetric d x d matrix, as the
// metrics take two per layer: what their time is compared with.
double measureEigh(int64_t dim, const metrics::MomentSolver& solver) {
  const Eigen::MatrixXd x = Eigen::MatrixXd::Random(dim, dim);
  const Eigen::MatrixXd moment = x.transpose() * x;
  const auto start = Clock::now();
  solver.eigenvalues(moment);
  return secondsSince(start);
}

// Random ids for one pass of `windows` windows; window indices are set per pass.
pass::WindowBatch randomBatch(int64_t windows, int64_t seq_len, int64_t vocab, uint64_t seed) {
  pass::WindowBatch batch;
  std::mt19937_64 rng(seed);
  std::uniform_int_distribution<int32_t> id(0, static_cast<int32_t>(vocab - 1));
  batch.ids.resize(static_cast<size_t>(windows * seq_len));
  for (auto& v : batch.ids) v = id(rng);
  batch.indices.resize(static_cast<size_t>(windows));
  batch.labels.resize(static_cast<size_t>(windows));
  return batch;
}

BenchModelResult measureModel(const BenchJob& job, const std::string& name, const fs::path& dir, double gemm_gflops) {
  const auto [plan, heads_plan] = benchPlans(job, dir);
  pass::ReportOptions heads_plan_report;
  heads_plan_report.screenot_k = heads_plan.heads->subspace_k;
  heads_plan_report.end_device = plan.pass.device;
  const auto& config = plan.config;
  releaseFreeMemory();
  resetPeakResident();
  const auto model = pass::loadPassModel(plan);
  const int64_t load_peak = peakResidentBytes();
  BenchModelResult r;
  r.name = name;
  r.model_type = config.model_type;
  r.layers = config.num_layers;
  r.hidden_size = config.hidden_size;
  r.heads = config.num_heads;
  r.kv_heads = config.num_kv_heads;
  r.intermediate_size = config.intermediate_size;
  r.vocab_size = config.vocab_size;
  r.seq_len = plan.pass.seq_len;
  r.batch = plan.pass.batch_size;
  std::error_code ec;
  r.checkpoint_bytes = static_cast<int64_t>(fs::file_size(dir / "model.safetensors", ec));
  r.flops_per_token = model::forwardFlopsPerToken(
      config, model::architectureFor(config.model_type, dir.string()).tensors(config), r.seq_len, plan.causal);

  auto analyze = std::make_unique<pass::AnalysisPass>(plan, model);
  auto analyze_heads = std::make_unique<pass::AnalysisPass>(heads_plan, model);
  auto batch = randomBatch(r.batch, r.seq_len, config.vocab_size, 0);
  // Where memory made the --heads plan choose a smaller batch, its own batch, its seconds
  // scaled to the same tokens.
  auto heads_batch = randomBatch(heads_plan.pass.batch_size, r.seq_len, config.vocab_size, 1);
  const double heads_scale = static_cast<double>(r.batch) / static_cast<double>(heads_plan.pass.batch_size);
  int64_t next_window = 0, device_peak = 0;
  const auto device = plan.pass.device;
  // (seconds, of which inside the accumulators: 0 unless timed)
  auto time = [&](pass::AnalysisPass* p, pass::WindowBatch& b) -> pass::BatchSeconds {
    for (auto& w : b.indices) w = next_window++;
    const auto start = Clock::now();
    auto seconds = p ? p->run(b) : analyze->forwardOnly(b);
    runtime::synchronize(device);
    seconds.total = secondsSince(start);
    if (const auto memory = runtime::cudaMemory()) device_peak = std::max(device_peak, memory->total - memory->free);
    return seconds;
  };
  time(nullptr, batch);  // warm-up: kernels chosen, buffers in place
  time(analyze.get(), batch);
  time(analyze_heads.get(), heads_batch);
  auto& rounds = r.rounds;
  rounds.resize(static_cast<size_t>(job.rounds));
  for (int i = 0; i < job.rounds; ++i) {
    auto& round = rounds[static_cast<size_t>(i)];
    for (const auto which : passOrder(i)) {
      if (which == BenchPass::kForward) round.forward = time(nullptr, batch).total;
      if (which == BenchPass::kAnalyze) {
        const auto t = time(analyze.get(), batch);
        round.analyze = t.total, round.analyze_accumulating = t.accumulating;
      }
      if (which == BenchPass::kAnalyzeHeads) {
        const auto t = time(analyze_heads.get(), heads_batch);
        round.analyze_heads = t.total * heads_scale, round.analyze_heads_accumulating = t.accumulating * heads_scale;
      }
    }
    spdlog::info("{}: round {}/{}", name, i + 1, job.rounds);
  }
  const bool timed = !device.isCuda();
  const auto rates = ratesFromRounds(rounds, static_cast<double>(r.batch * r.seq_len));
  r.forward_tokens_per_s = rates.forward_tokens_per_s;
  r.analyze_tokens_per_s = rates.analyze_tokens_per_s;
  r.analyze_heads_tokens_per_s = rates.analyze_heads_tokens_per_s;
  if (timed) {
    r.analyze_accumulator_share = rates.analyze_accumulator_share;
    r.analyze_heads_accumulator_share = rates.analyze_heads_accumulator_share;
  }
  r.forward_gemm_share = r.forward_tokens_per_s * r.flops_per_token / (gemm_gflops * 1e9);
  if (job.layer_major) {
    const int64_t batches = std::max<int64_t>(1, (job.wave > 0 ? job.wave : 4 * r.batch) / r.batch);
    std::vector<pass::WindowBatch> wave;
    for (int64_t k = 0; k < batches; ++k) wave.push_back(randomBatch(r.batch, r.seq_len, config.vocab_size, 2 + k));
    r.wave_windows = batches * r.batch;
    pass::AnalysisPass streamed(plan, pass::loadPassModel(dir, device, plan.pass.dtype, /*stream_blocks=*/true));
    const auto layer_major = measureLayerMajor(*analyze, streamed, wave, job.rounds, device, next_window);
    r.layer_major_tokens_per_s = layer_major.tokens_per_s;
    r.layer_major_vs_resident = layer_major.vs_resident;
  }

  // Memory and the fixed costs as one analyze --heads run has them: the timing above held
  // two passes' accumulators, a run holds one. The end stages run on its statistics.
  analyze.reset();
  analyze_heads.reset();
  releaseFreeMemory();
  resetPeakResident();
  pass::AnalysisPass run(heads_plan, model);
  time(&run, heads_batch);
  anova::AnalysisState state;
  state.layers = run.takeStatistics();
  auto start = Clock::now();
  pass::runMetricsStage(state, heads_plan_report, false);  // what analyze's report runs
  r.metrics_end_stage_s = secondsSince(start);
  start = Clock::now();
  r.heads_analysed = static_cast<int64_t>(pass::analyzeHeads(*model, state, *heads_plan.heads, heads_plan.causal).size());
  r.heads_end_stage_s = secondsSince(start);
  r.metrics_per_layer_s = r.metrics_end_stage_s / static_cast<double>(std::max<std::size_t>(1, state.layers.size()));
  r.heads_per_head_s = r.heads_end_stage_s / static_cast<double>(std::max<int64_t>(1, r.heads_analysed));
  r.eigh_s = measureEigh(config.hidden_size, *pass::metricOptions(heads_plan_report).moment_solver);
  r.peak_rss_bytes = std::max(load_peak, peakResidentBytes());
  if (device.isCuda()) r.device_memory_bytes = device_peak;
  return r;
}

}  // namespace

const std::vector<BenchShape>& benchShapes() {
  static const std::vector<BenchShape> shapes = {
      {"gpt2-small", shapeSpec("gpt2", 12, 768, 12, 12, 3072, 50257, 1024)},
      {"llama-small", shapeSpec("llama", 12, 768, 12, 4, 2048, 32000, 2048)},
      {"llama-1b", shapeSpec("llama", 22, 2048, 32, 4, 5632, 32000, 2048)},
      {"llama2-7b-2l", shapeSpec("llama", 2, 4096, 32, 32, 11008, 32000, 4096)},
      {"llama2-7b", shapeSpec("llama", 32, 4096, 32, 32, 11008, 32000, 4096)},
  };
  return shapes;
}

BenchResult runBench(const BenchJob& job) {
  if (job.seq_len < 8) throw InputError(option::kSeqLen, "must be at least 8");
  if (job.rounds < 1) throw InputError(option::kRounds, "must be at least 1");
  if (job.batch_size < 0) throw InputError(option::kBatchSize, "must not be negative");
  if (job.wave < 0) throw InputError(option::kWave, "must not be negative (0: four batches)");
  if (job.wave > 0 && !job.layer_major) throw InputError(option::kWave, "sizes the wave of --layer-major: add --layer-major");
  runtime::requireDevice(job.device);
  runtime::selectCudaDevice(job.device);
  // --out is judged (and held) before minutes of measuring, not when they are over.
  std::optional<io::OutputFile> out;
  if (!job.out.empty()) out.emplace(job.out, io::OutputFileRules{option::kOut, job.force, {}});
  std::vector<std::pair<std::string, fs::path>> models;
  for (const auto& m : job.models) {
    // A directory as given, a hub name from the cache or the hub.
    const bool directory = fs::is_directory(m);
    const auto dir = directory ? m : hub::modelDirectory(m.string(), "", hub::ModelParts::kWeights, processEnv());
    if (!fs::exists(dir / "config.json")) throw InputError(m.string(), "holds no config.json");
    models.emplace_back(!directory ? m.string() : m.filename().empty() ? m.parent_path().filename().string() : m.filename().string(), dir);
  }
  std::vector<std::string> shape_names = job.shapes;
  if (shape_names.empty() && models.empty())
    shape_names = {"gpt2-small", job.device.isCuda() ? "llama-1b" : "llama-small"};
  // Every name and the options against every model checked before any work: the plans
  // judge them as analyze does (--seq-len beyond learned positions, memory).
  for (const auto& [name, dir] : models) benchPlans(job, dir);
  for (const auto& name : shape_names) {
    const auto& shape = shapeNamed(name);
    if (job.seq_len > shape.spec.max_positions)
      throw InputError(option::kSeqLen, std::to_string(job.seq_len) + " exceeds the " + std::to_string(shape.spec.max_positions) +
                                        " positions of the benchmark shape " + name);
  }

  const WorkDirectory work(job.work_dir);
  std::vector<ShapeCheckpoint> checkpoints;
  for (const auto& name : shape_names) checkpoints.push_back(checkpointFor(shapeNamed(name), work.path(), job.dtype));

  BenchResult result;
  result.device = job.device.str();
  result.dtype = runtime::computeDtypeName(job.dtype);
  result.compute = !job.device.isCuda() && runtime::emulatedOnCpu(job.dtype)
                       ? result.dtype + " emulated in float32 (float32 products, every stored value rounded)"
                       : result.dtype;
  result.threads = runtime::intraOpThreads();
  result.blas = runtime::detectBlas().path;
  result.cpu = readCpuName();
  result.gemm_size = job.device.isCuda() ? 8192 : 2048;
  spdlog::info("measuring {}^3 matrix products in {} on {}", result.gemm_size, result.dtype, result.device);
  result.gemm_gflops = runtime::measureMatmulGflops(job.device, job.dtype, result.gemm_size, job.device.isCuda() ? 20 : 4, 3);
  result.tokenizer_tokens_per_s =
      measureTokenizer(job.models.empty() ? fs::path() : job.models.front(), job.seq_len, result.tokenizer_source);

  for (std::size_t i = 0; i < shape_names.size(); ++i)
    models.emplace_back(shape_names[i], writtenCheckpoint(shape_names[i], checkpoints[i]));
  for (const auto& [name, dir] : models) {
    spdlog::info("measuring {}", name);
    result.models.push_back(measureModel(job, name, dir, result.gemm_gflops));
  }
  if (out) out->writeText(benchJson(result).dump(2) + "\n");
  return result;
}

}  // namespace posgeom::jobs
