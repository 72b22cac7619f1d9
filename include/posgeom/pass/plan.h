#pragma once
// The plan of an analysis pass, made from the options and the model's config.json before
// a weight file is opened: every setting resolved (layers, window length, shard, batch
// size), every option judged against the model, and the memory estimated. Torch-free.
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "posgeom/anova/accumulator_options.h"
#include "posgeom/anova/state_layers.h"
#include "posgeom/corpus/window_sampler.h"
#include "posgeom/heads/head_analysis.h"
#include "posgeom/model/model_config.h"
#include "posgeom/pass/memory_estimate.h"
#include "posgeom/pass/options.h"

namespace posgeom::pass {

// How the pass runs each batch: what analyze and bench must agree on.
struct PassConfiguration {
  runtime::DeviceSpec device;
  runtime::ComputeDtype dtype = runtime::ComputeDtype::kFloat32;
  int64_t seq_len = 0;
  int64_t batch_size = 0;            // windows per forward pass
  anova::AccumulatorOptions accumulator;
  std::optional<bool> causal_mask;   // set: the forward request's mask (--causal); else the model's own
  int64_t last_layer = -1;           // the forward pass stops after this hidden state
  bool operator==(const PassConfiguration& o) const {
    return device == o.device && dtype == o.dtype && seq_len == o.seq_len && batch_size == o.batch_size &&
           accumulator == o.accumulator && causal_mask == o.causal_mask && last_layer == o.last_layer;
  }
};

struct PassPlan {
  std::filesystem::path model_dir;
  model::ModelConfig config;
  PassConfiguration pass;
  bool causal = true;                      // as the pass runs: the model's mask, or BERT with --causal
  corpus::WindowOptions windows;           // framing is the tokenizer's, added when it is loaded
  Shard shard;
  std::optional<heads::HeadOptions> heads;  // with --heads
  int64_t repeat_period = 0;               // --corpus repeated-random: each window is 3 copies of this many ids
  MemoryEstimate memory;
  int64_t parameters = 0;
  // Layer-major (--layer-major, or chosen where the resident pass does not fit): a wave of
  // this many windows (whole batches; the last wave may hold fewer) goes through block b,
  // its weights read from the checkpoint then, before block b + 1 runs (Model::forwardWave).
  // 0: the resident pass, a batch through every block at a time, every weight held.
  int64_t wave_windows = 0;
  ReportOptions report;                    // as asked, with the defaults fitted to the window and width
};

// What becomes of a layer's statistics once they are final: held to the end (a bench, a
// distributed rank, which reduces them at the end), or handed to a file beside the state
// and let go (one process that writes its state).
enum class FinalLayers { kHeld, kHandedToFiles };

// Judges every option against the config (InputError naming the option) and resolves the
// plan. Reads nothing but what `config` already holds, and the machine's free memory.
PassPlan planPass(const AnalyzeOptions& options, const std::filesystem::path& model_dir, const model::ModelConfig& config,
                  FinalLayers final_layers = FinalLayers::kHeld);

// The report options for a positional basis [positions, dim]: a --screenot-k the user did
// not give is cut to the largest that fits (as --lowfreq-k's default is); one given that
// does not fit is an InputError naming it. Before the pass, and again for the report.
ReportOptions fitReportOptions(const ReportOptions& report, int64_t positions, int64_t dim);
// The same for the positions and width of a state's layers (unchanged without layers).
ReportOptions fitReportOptions(const ReportOptions& report, const anova::StateLayers& layers);

// Why a report of one window says little: said (as a warning) by whoever knows the count.
std::string singleWindowWarning();

// The analysed blocks: block b is analysed when its output hidden.(b+1) is accumulated.
// Throws InputError for a --qk-heads head outside them, saying how heads are named.
void checkQkHeads(const std::vector<std::pair<int64_t, int64_t>>& qk_heads, const std::set<int64_t>& layers,
                  const model::ModelConfig& config);

}  // namespace posgeom::pass
