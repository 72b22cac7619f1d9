#include "posgeom/pass/plan.h"

#include <spdlog/spdlog.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>

#include "posgeom/base/error.h"
#include "posgeom/base/option_names.h"
#include "posgeom/corpus/corpus_source.h"
#include "posgeom/model/architecture.h"

namespace posgeom::pass {
namespace {

// The model's parameters by where they live: outside the blocks, and the largest block's.
struct ParameterLayout {
  int64_t all = 0, outside = 0, largest_block = 0, largest_index = 0;
  // What a pass holds at once: every parameter resident; layer-major, those outside the
  // blocks and two blocks' (the one running, the next read ahead).
  int64_t held(bool layer_major) const { return layer_major ? std::min(all, outside + 2 * largest_block) : all; }
};

ParameterLayout parameterLayout(const model::ModelConfig& config) {
  ParameterLayout p;
  std::map<int64_t, int64_t> per_block;
  for (const auto& spec : model::architectureFor(config.model_type, config.source.string()).tensors(config)) {
    p.all += spec.numel();
    if (spec.block < 0)
      p.outside += spec.numel();
    else
      per_block[spec.block] += spec.numel();
  }
  for (const auto& [block, n] : per_block)
    if (n > p.largest_block) p.largest_block = n, p.largest_index = block;
  return p;
}

int64_t windowLength(const AnalyzeOptions& o, const model::ModelConfig& config) {
  const int64_t limit = config.max_positions > 0 ? config.max_positions : 512;
  const int64_t seq_len = o.seq_len > 0 ? o.seq_len : std::min<int64_t>(512, limit);
  if (config.max_positions > 0 && seq_len > config.max_positions) {
    // Learned positions end at the table; relative schemes extrapolate, perhaps badly.
    if (config.learnedPositions())
      throw InputError(option::kSeqLen, std::to_string(seq_len) + " exceeds the model's " + std::to_string(config.max_positions) +
                                        " learned positions");
    spdlog::warn("--seq-len {} is beyond the {} positions the model was trained on ({} positions extrapolate)", seq_len,
                 config.max_positions, model::positionSchemeName(config.positions));
  }
  return seq_len;
}

// Bytes a window of a layer-major wave holds where the model runs: a block's input and its
// output.
int64_t waveBytesPerWindow(const AnalyzeOptions& o, const PassPlan& plan) {
  return 2 * plan.pass.seq_len * plan.config.hidden_size * runtime::computeBytes(o.dtype);
}

// Windows of a wave that fit beside `needed` bytes: of what the device has free a quarter
// stays free (others use it too, and the estimate is one); --max-memory is the user's to
// spend. nullopt where the device cannot tell what it has.
std::optional<int64_t> windowsBeside(const AnalyzeOptions& o, int64_t needed, int64_t per_window,
                                     const std::optional<int64_t>& limit) {
  if (!limit) return std::nullopt;
  int64_t spare = std::max<int64_t>(0, *limit - needed);
  if (!o.max_memory) spare -= spare / 4;
  return spare / per_window;
}

// The batch size of the pass and where its weights live: as asked, or chosen. Resident
// unless --layer-major; where the resident pass does not fit the device's memory (or
// --max-memory), layer-major when that fits (two blocks' weights at a time), at the batch
// asked or preferred, else at the largest that fits. Stops before the pass when nothing does.
// A layer-major run that hands its final layers to files and holds every window in one wave
// holds two layers' statistics at a time, and is counted so.
int64_t chooseBatch(const AnalyzeOptions& o, PassPlan& plan, bool& layer_major, FinalLayers final_layers) {
  const auto& a = plan.pass.accumulator;
  PassShape shape;
  const int64_t requested = o.batch_size > 0 ? o.batch_size : preferredBatch(o.device, plan.pass.seq_len);
  shape.batch = o.num_seqs > 0 ? std::min(requested, o.num_seqs) : requested;
  shape.seq_len = plan.pass.seq_len;
  shape.compute_bytes = runtime::computeBytes(o.dtype);
  shape.layers_kept = static_cast<int64_t>(a.layers.size());
  shape.skip_first = a.skip_first;
  shape.second_moment = a.second_moment;
  shape.heads = a.attention_inputs;
  shape.contexts_cap = a.caps.contexts;
  shape.reservoir = a.caps.reservoir;
  shape.attention_samples = a.caps.attention_samples;
  shape.windows = a.windows_expected;
  shape.device_memory = o.device.isCuda();
  shape.layer_cosines = o.layer_cosines;
  layer_major = o.layer_major;
  const auto parameters = parameterLayout(plan.config);
  const auto limit = o.max_memory ? o.max_memory : availableMemory(o.device);
  const int64_t per_window = waveBytesPerWindow(o, plan);
  const bool may_stream = final_layers == FinalLayers::kHandedToFiles && o.num_seqs > 0 && (o.wave == 0 || o.wave >= o.num_seqs);
  auto shaped = [&](bool lm) {
    PassShape s = shape;
    s.layer_major = lm;
    s.layer_cosines = shape.layer_cosines && !lm;
    return s;
  };
  // Streamed only where the one wave of every window fits beside the streamed estimate.
  auto estimate_of = [&](PassShape s) {
    s.streamed = may_stream && s.layer_major;
    auto e = estimatePassMemory(plan.config, parameters.held(s.layer_major), s);
    if (!s.streamed) return e;
    const auto fits = windowsBeside(o, e.total(), per_window, limit);
    if (fits && *fits >= o.num_seqs) return e;
    s.streamed = false;
    return estimatePassMemory(plan.config, parameters.held(s.layer_major), s);
  };
  auto estimate = [&](bool lm) { return estimate_of(shaped(lm)); };
  plan.memory = estimate(layer_major);
  if (!limit) {
    spdlog::info("memory: about {} needed ({} cannot tell what it has)", plan.memory.describe(), o.device.str());
    return shape.batch;
  }
  spdlog::info("memory: about {} needed of {} available (batch {})", plan.memory.describe(), formatBytes(*limit), shape.batch);
  if (plan.memory.total() <= *limit) return shape.batch;
  auto largest_batch = [&](bool lm) { return largestBatchWithin(shaped(lm), *limit, estimate_of); };
  const auto resident_memory = plan.memory;
  auto take_layer_major = [&](int64_t batch) {
    layer_major = true;
    shape.batch = batch;
    plan.memory = estimate(true);
    spdlog::info("layer-major: the weights ({}) do not fit beside the pass; each block's are read from the checkpoint "
                 "when a wave runs it, two blocks' at a time (the largest, block {}: {}): about {} needed (batch {})",
                 formatBytes(resident_memory.weights), parameters.largest_index,
                 formatBytes(parameters.largest_block * shape.compute_bytes), plan.memory.describe(), batch);
    return batch;
  };
  if (!layer_major && estimate(true).total() <= *limit) return take_layer_major(shape.batch);
  const int64_t fits = largest_batch(layer_major);
  if (o.batch_size == 0 && fits > 0) {
    spdlog::info("memory: batch {} fits", fits);
    shape.batch = fits;
    plan.memory = estimate(layer_major);
    return fits;
  }
  const int64_t fits_layer_major = layer_major ? fits : largest_batch(true);
  if (o.batch_size == 0 && fits_layer_major > 0) return take_layer_major(fits_layer_major);
  const int64_t best = std::max(fits, fits_layer_major);
  throw InputError("memory", "the pass needs about " + plan.memory.describe() + " but " + formatBytes(*limit) +
                                 (o.max_memory ? " is allowed (--max-memory)" : " is available on " + o.device.str()) +
                                 (best > 0 ? "; --batch-size " + std::to_string(best) + " fits"
                                           : "; not even one window fits: shorten --seq-len, select fewer --layer, or "
                                             "use --no-second-moment or --dtype bfloat16"));
}

// Layer-major: the windows of a wave, whole batches. It holds two hidden states a window
// where the model runs (a block's input and its output) besides what a batch needs (the
// resident estimate): a wave takes three quarters of what is left of the device's free
// memory (or all that --max-memory leaves), at least one batch; a --wave that does not fit
// there is refused. A wave that holds every one of --num-seqs windows is one wave (its last
// batch may be short), so each weight is read once.
int64_t chooseWave(const AnalyzeOptions& o, const PassPlan& plan) {
  const int64_t batch = plan.pass.batch_size;
  const int64_t per_window = waveBytesPerWindow(o, plan);
  const auto limit = o.max_memory ? o.max_memory : availableMemory(o.device);
  // Unknown memory (a device that cannot tell): sixteen batches unless --wave says.
  const int64_t fits = windowsBeside(o, plan.memory.total(), per_window, limit).value_or(16 * batch);
  const auto bytes = [&](int64_t windows) {  // saturating: --wave may be any int64
    return formatBytes(windows > INT64_MAX / per_window ? INT64_MAX : windows * per_window);
  };
  int64_t wave = o.wave > 0 ? o.wave : fits;
  const bool one_wave = o.num_seqs > 0 && wave >= o.num_seqs;
  const int64_t held = one_wave ? o.num_seqs : std::max(batch, wave / batch * batch);
  if (o.wave > 0 && limit && held > batch && held > fits)
    throw InputError(option::kWave, std::to_string(o.wave) + " windows would hold " + bytes(held) +
                                        " of hidden states but " + bytes(fits) + " is left beside a batch" +
                                        (o.max_memory ? " (--max-memory)" : " on " + o.device.str() + " (a quarter of its free memory kept free)") +
                                        "; --wave " +
                                        std::to_string(std::max(batch, fits / batch * batch)) + " fits");
  if (one_wave) {
    spdlog::info("layer-major: one wave of all {} windows ({} of hidden states where the model runs): each weight read once",
                 held, bytes(held));
    return (held + batch - 1) / batch * batch;
  }
  spdlog::info("layer-major: waves of {} windows ({} batches, {} of hidden states where the model runs)", held, held / batch,
               bytes(held));
  return held;
}

}  // namespace

ReportOptions fitReportOptions(const ReportOptions& r, int64_t positions, int64_t dim) {
  ReportOptions fitted = r;
  const int64_t smaller = std::min(positions, dim);
  if (!r.screenot_k_given) {
    // ScreeNOT needs k below min(rows, cols), and 2k + 1 below it when it imputes.
    const bool impute = r.screenot_strategy == metrics::ScreeNotStrategy::kImpute;
    const int64_t largest = impute ? (smaller - 2) / 2 : smaller - 1;
    if (largest < 1)
      throw InputError(option::kScreenotK, "no bound fits a positional basis of " + std::to_string(positions) + " positions x " +
                                           std::to_string(dim) + " dims: ScreeNOT needs both at least " +
                                           (impute ? "4 (or 2 with --screenot-strategy w)" : "2") + "; analyse longer windows");
    if (largest < r.screenot_k) fitted.screenot_k = static_cast<int>(largest);
  }
  metrics::checkScreeNotRank(fitted.screenot_k, fitted.screenot_strategy, smaller);
  return fitted;
}

ReportOptions fitReportOptions(const ReportOptions& r, const anova::StateLayers& layers) {
  if (layers.empty()) return r;
  return fitReportOptions(r, layers.shape(0).positions, layers.shape(0).dim);
}

std::string singleWindowWarning() {
  return "one window only: a single sequence is its own context mean, so the report's context and residual are zero "
         "and its context metrics say nothing (analyse at least 2 windows)";
}

void checkQkHeads(const std::vector<std::pair<int64_t, int64_t>>& qk_heads, const std::set<int64_t>& layers,
                  const model::ModelConfig& config) {
  for (const auto& [block, head] : qk_heads) {
    const std::string name = std::to_string(block) + "." + std::to_string(head);
    if (block >= config.num_layers)
      throw InputError(option::kQkHeads, name + " names no block: the model's blocks are 0.." + std::to_string(config.num_layers - 1) +
                                         " (heads are named by their 0-based block, which reads hidden.b; before, by the "
                                         "hidden state the block writes, one more)");
    if (head >= config.num_heads)
      throw InputError(option::kQkHeads, name + " names no head: the blocks have heads 0.." + std::to_string(config.num_heads - 1));
    if (!layers.count(block + 1))
      throw InputError(option::kQkHeads, name + " is not analysed: block " + std::to_string(block) + " writes hidden." +
                                         std::to_string(block + 1) + ", which is not among --layer");
  }
}

PassPlan planPass(const AnalyzeOptions& o, const std::filesystem::path& model_dir, const model::ModelConfig& config,
                  FinalLayers final_layers) {
  validateOptions(o);
  PassPlan plan;
  plan.model_dir = model_dir;
  plan.config = config;
  plan.parameters = parameterLayout(config).all;
  auto& pass = plan.pass;
  pass.device = o.device;
  pass.dtype = o.dtype;
  runtime::requireDevice(o.device);
  runtime::selectCudaDevice(o.device);  // before the free-memory query: a rank's GPU, not GPU 0
  pass.seq_len = windowLength(o, config);
  if (o.skip_first < 0) throw InputError(option::kSkipFirst, "must not be negative");
  if (o.skip_first >= pass.seq_len)
    throw InputError(option::kSkipFirst, "leaves no positions of the " + std::to_string(pass.seq_len));
  if (corpus::isGenerated(o.corpus.path) && o.num_seqs <= 0) throw InputError("--corpus " + o.corpus.path, "needs --num-seqs");
  if (o.corpus.path == "repeated-random") {
    if (pass.seq_len < 6)
      throw InputError("--corpus repeated-random", "needs windows of at least 6 tokens (three copies of 2), not " +
                                                       std::to_string(pass.seq_len));
    plan.repeat_period = corpus::repeatPeriod(pass.seq_len);
  }
  // Options the end stages read, checked against the window before any work.
  const int64_t positions = pass.seq_len - o.skip_first;
  plan.report = fitReportOptions(o.report, positions, config.hidden_size);
  if (plan.report.screenot_k != o.report.screenot_k)
    spdlog::info("--screenot-k: {} (the default {} does not fit {} positions x {} dims)", plan.report.screenot_k,
                 o.report.screenot_k, positions, config.hidden_size);
  if (o.report.lowfreq_k != 0 && (o.report.lowfreq_k < 1 || o.report.lowfreq_k > positions))
    throw InputError(option::kLowfreqK, std::to_string(o.report.lowfreq_k) + " is outside 1.." + std::to_string(positions) +
                                        " (the positions of a window after --skip-first)");
  if (o.heads && o.head_options.kernel_skip >= pass.seq_len)
    throw InputError(option::kKernelSkip, std::to_string(o.head_options.kernel_skip) + " leaves no keys in windows of " +
                                          std::to_string(pass.seq_len) + " (at most " + std::to_string(pass.seq_len - 1) + ")");

  auto& a = pass.accumulator;
  a.layers = resolveLayers(o.layers, config.num_layers + 1);
  a.skip_first = o.skip_first;
  a.second_moment = o.second_moment;
  a.attention_inputs = o.heads;
  a.caps = o.caps;
  a.windows_expected = o.num_seqs;
  if (o.causal) pass.causal_mask = true;
  pass.last_layer = *a.layers.rbegin();
  plan.causal = o.causal || !config.bidirectional;
  if (o.heads) {
    plan.heads = headOptionsOf(o);
    plan.heads->subspace_k = plan.report.screenot_k;
    plan.heads->repeat_period = plan.repeat_period;
    if (o.neurons && config.moe.sparse(0))
      throw InputError(option::kNeurons, "is not available for model_type '" + config.model_type +
                                             "': block 0's MLP is a mixture of experts (its router picks which neurons a "
                                             "token reaches, so no one circuit of neurons is the block's)");
    if (o.neurons && a.layers.count(1) == 0)
      throw InputError(option::kNeurons, "reads block 0's heads: --layer must include 1 (hidden.1, the state block 0 writes)");
    checkQkHeads(plan.heads->qk_maps, a.layers, config);
  }

  plan.shard = o.shard.value_or(Shard{});
  // Shard i reads windows i, i + n, ... of the --num-seqs: none when i is past them.
  if (o.num_seqs > 0 && plan.shard.index >= o.num_seqs)
    throw InputError(option::kShard, plan.shard.str() + " leaves this shard no window: it reads windows " +
                                    std::to_string(plan.shard.index) + ", " + std::to_string(plan.shard.index + plan.shard.count) +
                                    ", ... of the --num-seqs " + std::to_string(o.num_seqs) + " (0.." +
                                    std::to_string(o.num_seqs - 1) + ")");
  auto& w = plan.windows;
  w.seq_len = pass.seq_len;
  w.max_windows = o.num_seqs;
  w.random_offsets = o.sampling == Sampling::kRandom;
  w.seed = o.seed;
  w.cross_documents = o.cross_documents;
  w.max_per_document = o.windows_per_document;
  w.shard_index = plan.shard.index;
  w.shard_count = plan.shard.count;
  bool layer_major = false;
  pass.batch_size = chooseBatch(o, plan, layer_major, final_layers);
  if (layer_major) plan.wave_windows = chooseWave(o, plan);
  pass.accumulator.allocate_on_first_use = layer_major;
  pass.accumulator.layer_cosines = o.layer_cosines && !layer_major;
  if (o.layer_cosines && layer_major)
    spdlog::info("layer-major: the cosines between layers (--layer-cosines: a batch's every layer at once) are not measured");
  return plan;
}

}  // namespace posgeom::pass
